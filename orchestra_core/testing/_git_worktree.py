"""What the in-memory Git does to a working tree and its index: switch branches, reset, stage, build trees."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from orchestra_core.agents.path_guard import is_dotgit
from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import GitError
from orchestra_core.testing import _git_files as disk
from orchestra_core.testing._git_objects import EXECUTABLE_MODE, FILE_MODE, Entry, Files
from orchestra_core.testing._git_repository import Repository, Worktree, file_entry, put


def carry_files(
    repo: Repository, tree: Worktree, old: Files, new: Files, refused: Callable[[list[str]], GitError]
) -> None:
    """Bring the worktree's files (and index) that differ between `old` and `new` to `new`; raises
    `refused(paths)` without touching anything when one of them has a local change."""
    changed = sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))
    read = repo.reader(tree)
    dirty = [
        p for p in changed if tree.index.get(p) != old.get(p) or file_entry(read(p)) != tree.index.get(p)
    ]
    if dirty:
        raise refused(dirty)
    for path in changed:
        if path in new:
            disk.write_file(tree.path, path, new[path][0], repo.objects.blobs[new[path][1]])
            tree.index[path] = new[path]
        else:
            disk.remove(tree.path, path)
            tree.index.pop(path, None)
    disk.remove_empty_directories(tree.path)


def switch(repo: Repository, tree: Worktree, branch: str, target: str, command: list[str]) -> None:
    """`git checkout <branch>`: update the files that differ, keep local changes elsewhere, refuse to lose any."""

    def refused(dirty: list[str]) -> GitError:
        detail = f"error: Your local changes to the following files would be overwritten by checkout: {', '.join(dirty)}"
        return GitError(tree.path, command, detail, 1)

    old, new = repo.objects.commit_files(repo.head_of(tree)), repo.objects.commit_files(target)
    carry_files(repo, tree, old, new, refused)
    tree.head = f"ref: refs/heads/{branch}"


def reset_hard_and_clean(repo: Repository, tree: Worktree, target: str) -> None:
    """`git reset --hard <target>` then `git clean -d -f -f`: ignored files stay."""
    new = repo.objects.commit_files(target)
    for path in set(tree.index) | set(repo.objects.commit_files(repo.head_of(tree))):
        if path not in new:
            disk.remove(tree.path, path)
    disk.checkout_files(tree.path, repo.objects, new)
    tree.index = dict(new)
    if tree.branch_ref:
        repo.refs[tree.branch_ref] = target
    else:
        tree.head = target
    ignores = repo.ignores(tree)
    untracked = [
        p
        for p, is_dir in disk.walk(tree.path)
        if not is_dir and p not in new and not ignores.ignored(p, False)
    ]
    for path in untracked:  # all decided first: deleting a .gitignore must not un-ignore what it covered
        disk.remove(tree.path, path)
    disk.remove_empty_directories(tree.path)


def stage(repo: Repository, tree: Worktree, paths: Sequence[str]) -> None:
    """`git update-index --add --remove`: each path's index entry from its file, or gone with it."""
    read = repo.reader(tree)
    for path in paths:
        try:
            state = read(path)
        except disk.NotAFileError:
            detail = f"error: {path}: is a directory - add files inside instead"
            raise GitError(tree.path, ["update-index", path], detail, 128) from None
        put(tree.index, path, (state[0], repo.objects.put_blob(state[1])) if state else None)


def with_files(
    repo: Repository, tree: Worktree, base: Files, paths: Sequence[str], versions: Mapping[str, FileVersion]
) -> Files:
    """`base` with `paths` taken from the working tree (deleted where missing), or from `versions`; a listed
    directory stands for the files `base` tracks below it."""
    _check_clean(tree, paths)
    content = dict(base)
    for path in dict.fromkeys(p for p in paths if p in versions):
        put(content, path, captured_entry(repo, versions[path], base.get(path)))
    read = repo.reader(tree, base)
    wanted = list(dict.fromkeys(p for p in paths if p not in versions))
    for path in list(wanted):
        if (tree.path / path).is_dir() and not (tree.path / path).is_symlink():
            wanted += [p for p in base if p.startswith(f"{path}/") and p not in wanted]
    for path in wanted:
        try:
            state = read(path)
        except disk.NotAFileError:
            content.pop(path, None)  # a file replaced by a directory (its files are listed apart)
            continue
        put(content, path, (state[0], repo.objects.put_blob(state[1])) if state else None)
    return content


def capture(repo: Repository, tree: Worktree, paths: Sequence[str]) -> dict[str, FileVersion]:
    """`hash-object -w` of each path as it is now (modes as read without an index); directories left out."""
    _check_clean(tree, paths)
    read = repo.reader(tree, {})
    versions: dict[str, FileVersion] = {}
    for path in dict.fromkeys(paths):
        try:
            state = read(path)
        except disk.NotAFileError:
            continue
        versions[path] = FileVersion(state[0], repo.objects.put_blob(state[1])) if state else FileVersion()
    return versions


def captured_entry(repo: Repository, version: FileVersion, known: Entry | None) -> Entry | None:
    """A captured version's entry; without core.fileMode the executable bit keeps `known`'s mode."""
    if version.deleted:
        return None
    if version.blob not in repo.objects.blobs:
        raise GitError(repo.common_dir, ["mktree"], f"fatal: blob {version.blob} is not in the object store", 128)
    trust = (repo.config.get("core.filemode") or ["true"])[-1].lower() in ("true", "yes", "on", "1")
    modes = (FILE_MODE, EXECUTABLE_MODE)
    if not trust and known is not None and known[0] in modes and version.mode in modes:
        return known[0], version.blob
    return version.mode, version.blob


def _check_clean(tree: Worktree, paths: Sequence[str]) -> None:
    for path in paths:
        unclean = any(part in ("", "..", ".") or is_dotgit(part) for part in path.split("/")) or "\0" in path
        if not path or path.startswith("/") or unclean:
            raise GitError(
                tree.path, ["hash-object", path], f"{path!r} is not a clean repo-relative file path"
            )
