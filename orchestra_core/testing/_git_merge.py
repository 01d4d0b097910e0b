"""What the in-memory Git does for `merge_tree` and `checkout_tree`: a file-level three-way merge and a
two-tree checkout."""

from __future__ import annotations

from collections import deque

from orchestra_core.ports.git import ConflictedFile, GitError, MergeResult
from orchestra_core.testing._git_objects import FILE_MODE, Entry, Files, ObjectStore
from orchestra_core.testing._git_repository import Repository, Worktree
from orchestra_core.testing._git_worktree import carry_files


def merge_commits(repo: Repository, worktree: Worktree, ours: str, theirs: str) -> MergeResult:
    """Three-way merge of two commits from their merge base, file by file.

    Simpler than git: a file both sides changed differently is a conflict as a whole (git would still merge
    changes to different lines); its text holds both versions between conflict markers.
    """
    command = ["merge-tree", "--write-tree", ours, theirs]
    ours_id = repo.commit_id(worktree, ours, command)
    theirs_id = repo.commit_id(worktree, theirs, command)
    base = merge_base(repo.objects, ours_id, theirs_id)
    if base is None:
        raise GitError(worktree.path, command, "fatal: refusing to merge unrelated histories", 128)
    objects = repo.objects
    old, left, right = objects.commit_files(base), objects.commit_files(ours_id), objects.commit_files(theirs_id)
    merged: Files = {}
    conflicts: list[ConflictedFile] = []
    messages: list[str] = []
    for path in sorted(old.keys() | left.keys() | right.keys()):
        entry, conflict = _merge_path(objects, path, old.get(path), left.get(path), right.get(path), (ours, theirs))
        if entry is not None:
            merged[path] = entry
        if conflict is not None:
            conflicts.append(conflict)
            messages.append(f"CONFLICT (content): Merge conflict in {path}")
    return MergeResult(objects.put_files(merged), not conflicts, tuple(conflicts), tuple(messages))


def _merge_path(
    objects: ObjectStore,
    path: str,
    base: Entry | None,
    ours: Entry | None,
    theirs: Entry | None,
    labels: tuple[str, str],
) -> tuple[Entry | None, ConflictedFile | None]:
    if ours == theirs or theirs == base:
        return ours, None
    if ours == base:
        return theirs, None
    if ours is None or theirs is None:  # modify/delete: the modified file stays
        kept = ours or theirs
        assert kept is not None
        return kept, ConflictedFile(path, objects.blobs[kept[1]].decode("utf-8", "replace"))
    text = (
        f"<<<<<<< {labels[0]}\n{_text(objects, ours)}=======\n{_text(objects, theirs)}>>>>>>> {labels[1]}\n"
    )
    return (FILE_MODE, objects.put_blob(text.encode("utf-8"))), ConflictedFile(path, text)


def _text(objects: ObjectStore, entry: Entry) -> str:
    text = objects.blobs[entry[1]].decode("utf-8", "replace")
    return text if not text or text.endswith("\n") else text + "\n"


def merge_base(objects: ObjectStore, first: str, second: str) -> str | None:
    """A best common ancestor: common to both, and no other common ancestor descends from it."""
    common = _ancestors(objects, first) & _ancestors(objects, second)
    best = [c for c in common if not any(c != other and c in _ancestors(objects, other) for other in common)]
    return min(best) if best else None


def _ancestors(objects: ObjectStore, start: str) -> set[str]:
    seen = {start}
    queue = deque([start])
    while queue:
        for parent in objects.commits[queue.popleft()].parents:
            if parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return seen


def checkout_tree(repo: Repository, tree: Worktree, old: str, new: str, command: list[str]) -> None:
    """`git read-tree -m -u <old> <new>`: files that differ go from `old` to `new`; a local change to one of
    them fails the whole call."""

    def refused(dirty: list[str]) -> GitError:
        return GitError(tree.path, command, f"error: Entry '{dirty[0]}' not uptodate. Cannot merge.", 128)

    before = repo.objects.commit_files(repo.commit_id(tree, old, command))
    after = repo.objects.commit_files(repo.commit_id(tree, new, command))
    carry_files(repo, tree, before, after, refused)
