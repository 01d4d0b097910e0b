"""SubprocessGit: the Git port over the git command line (no git library)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from orchestra_adapters.git.command import GitCommand, decode, encode, identity_environment
from orchestra_adapters.git.parsing import (
    LOG_FORMAT,
    parse_log,
    parse_status_v2,
    parse_trailers,
    parse_worktree_list,
)
from orchestra_core.model.turn import FileVersion
from orchestra_core.ports.git import (
    FileChange,
    GitError,
    Identity,
    LogEntry,
    MergeResult,
    RefConflictError,
    RepositoryInfo,
    StatusEntry,
    TreeChange,
    WorktreeInfo,
)
from orchestra_core.ports.tree_files import TreeFiles

if TYPE_CHECKING:  # locks (filelock), merges and trees are imported when first used: most runs need none
    from orchestra_adapters.git.trees import FileModes, TreeBuilder

_MUST_NOT_EXIST = ""  # update-ref: the ref must not exist yet
# A user index this large (about 12,000 paths) gets managed worktrees a split index: per-turn index updates
# then rewrite a small file instead of the whole index.
SPLIT_INDEX_THRESHOLD = 1 << 20
_DIFF_OPTIONS = ("-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false")
_NOT_A_REPOSITORY = "fatal: not a git repository (or any of the parent directories): .git"


class SubprocessGit:
    """Runs git commands: see the `Git` port for what each method promises.

    Every call runs with `GIT_TERMINAL_PROMPT=0`, no pager, `LC_ALL=C`, hooks disabled (except
    `commit(run_hooks=True)`), hardened against a hostile repository config (`GitCommand`), and without
    inherited `GIT_DIR`-style variables; calls that change or read a worktree's files pin the work tree to it.
    """

    def __init__(self, command: GitCommand | None = None) -> None:
        self._git = command or GitCommand()
        self._infos: dict[Path, RepositoryInfo] = {}
        self._modes: dict[Path, FileModes] = {}
        self._cache_lock = threading.Lock()

    # --- repositories and refs -------------------------------------------------------------------

    def repository(self, path: Path) -> RepositoryInfo:
        if not Path(path).is_dir():
            raise GitError(path, ["rev-parse"], "not a directory")
        args = [
            "rev-parse",
            "--is-bare-repository",
            "--absolute-git-dir",
            "--git-common-dir",
            "--show-object-format",
            "--show-toplevel",
        ]
        with self._cache_lock:  # a repository's shape does not change while a command runs
            cached = self._infos.get(Path(path).resolve())
        if cached is not None:
            return cached
        if not _may_be_in_repository(Path(path)):  # no git process for a directory outside every repository
            raise GitError(path, args, _NOT_A_REPOSITORY, 128)
        # One process: in a bare repository git prints the first four answers, then fails on the last.
        process = self._git.run(Path(path), args, ok_codes=(0, 128))
        lines = decode(process.stdout).split("\n")
        bare = lines[0] == "true"
        if process.returncode != 0 and not (bare and len(lines) >= 4):
            raise GitError(path, args, process.stderr.decode("utf-8", "replace"), process.returncode)
        _, git_dir, common, object_format = lines[:4]
        common_path = Path(common) if Path(common).is_absolute() else (Path(path) / common)
        info = RepositoryInfo(
            toplevel=None if bare else Path(lines[4]),
            git_dir=Path(git_dir),
            common_dir=common_path.resolve(),
            is_bare=bare,
            object_format=object_format,
        )
        with self._cache_lock:
            self._infos[Path(path).resolve()] = info
            if info.toplevel is not None:
                self._infos[info.toplevel.resolve()] = info
        return info

    def resolve_commit(self, repo: Path, rev: str) -> str | None:
        if not rev or rev.startswith("-"):
            return None
        process = self._git.run(
            repo, ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], ok_codes=(0, 1)
        )
        return decode(process.stdout).strip() or None

    def current_branch(self, worktree: Path) -> str | None:
        head = _head_file_ref(Path(worktree))
        if head is not None:
            return head.removeprefix("refs/heads/") if head.startswith("refs/heads/") else None
        process = self._git.run(worktree, ["symbolic-ref", "--quiet", "--short", "HEAD"], ok_codes=(0, 1))
        return decode(process.stdout).strip() or None

    def status(self, worktree: Path, *, untracked: bool = True) -> tuple[StatusEntry, ...]:
        from orchestra_adapters.git.lazy import is_lazy, reveal_written

        if is_lazy(worktree):  # files written since the fork lose their skip-worktree mark: git compares them
            with self.lock(worktree):
                reveal_written(self._git, worktree)
        mode = "--untracked-files=all" if untracked else "--untracked-files=no"
        process = self._git.run(
            worktree, ["status", "--porcelain=v2", "-z", mode], env={"GIT_OPTIONAL_LOCKS": "0"}, work_tree=True
        )
        return parse_status_v2(process.stdout)

    def branches(self, repo: Path) -> tuple[str, ...]:
        output = self._git.text(repo, ["for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/"])
        return tuple(sorted(line for line in output.split("\n") if line))

    def is_valid_branch_name(self, repo: Path, name: str) -> bool:
        if not name or name.startswith("-") or name == "HEAD":
            return False
        process = self._git.run(repo, ["check-ref-format", f"refs/heads/{name}"], ok_codes=(0, 1))
        return process.returncode == 0

    def create_branch(self, repo: Path, name: str, sha: str) -> None:
        self.update_ref(repo, f"refs/heads/{name}", sha, expected_old=_MUST_NOT_EXIST)

    def delete_branch(self, repo: Path, name: str) -> None:
        with self.lock(repo):
            self._git.run(repo, ["update-ref", "-d", f"refs/heads/{name}"])

    def update_ref(self, repo: Path, ref: str, new: str, *, expected_old: str | None) -> None:
        args = ["update-ref", "-m", "orchestra", ref, new]
        if expected_old is not None:
            args.append(expected_old)
        with self.lock(repo):
            try:
                self._git.run(repo, args)
            except GitError as error:
                if expected_old is not None:
                    raise RefConflictError(repo, args, error.stderr, error.exit_code) from error
                raise

    # --- worktrees ---------------------------------------------------------------------------------

    def worktree_add(self, repo: Path, path: Path, branch: str) -> None:
        options = _parallel_checkout()
        if _index_size(self._info(repo).common_dir) >= SPLIT_INDEX_THRESHOLD:
            options += ["-c", "core.splitIndex=true"]
        with self._worktree_change(repo):
            self._git.run(repo, [*options, "worktree", "add", "--quiet", str(path), branch])

    def worktree_add_detached(self, repo: Path, path: Path, sha: str) -> None:
        with self._worktree_change(repo):
            self._git.run(repo, [*_parallel_checkout(), "worktree", "add", "--quiet", "--detach", str(path), sha])

    def worktrees(self, repo: Path) -> tuple[WorktreeInfo, ...]:
        return parse_worktree_list(self._git.run(repo, ["worktree", "list", "--porcelain", "-z"]).stdout)

    def worktree_remove(self, repo: Path, path: Path) -> None:
        with self._worktree_change(repo):
            self._git.run(repo, ["worktree", "remove", "--force", "--force", str(path)])

    def worktree_prune(self, repo: Path) -> None:
        with self._worktree_change(repo):
            self._git.run(repo, ["worktree", "prune"])

    def checkout(self, worktree: Path, branch: str) -> None:
        with self.lock(worktree):
            self._git.run(worktree, ["checkout", "--quiet", branch, "--"], work_tree=True)

    def discard_changes(self, worktree: Path, sha: str) -> None:
        from orchestra_adapters.git.lazy import is_lazy, reveal_written

        with self.lock(worktree):
            if is_lazy(worktree):  # `reset --hard` leaves alone a file on disk whose entry is marked skip-worktree
                reveal_written(self._git, worktree)
            self._git.run(worktree, ["reset", "--quiet", "--hard", sha], work_tree=True)
            self._git.run(worktree, ["clean", "--quiet", "-d", "--force", "--force"], work_tree=True)

    def checkout_tree(self, worktree: Path, old: str, new: str) -> None:
        from orchestra_adapters.git.lazy import is_lazy, sparse_read_tree

        with self.lock(worktree):
            if is_lazy(worktree):  # stays lazy: the files of `new` are read from its objects
                sparse_read_tree(self._git, worktree, "", ["-m", "-u", old, new])
            else:
                self._git.run(worktree, ["read-tree", "-m", "-u", old, new], work_tree=True)

    def merge_tree(self, repo: Path, ours: str, theirs: str) -> MergeResult:
        from orchestra_adapters.git.merges import merge_tree

        return merge_tree(self._git, repo, ours, theirs)

    def add_exclude(self, repo: Path, pattern: str) -> bool:
        exclude = self._info(repo).common_dir / "info" / "exclude"
        if _has_line(exclude, pattern):  # the usual case after the first run: no lock, nothing written
            return False
        with self.lock(repo):
            existing = _read_exclude(exclude)
            if pattern in (line.strip() for line in existing.splitlines()):
                return False
            exclude.parent.mkdir(parents=True, exist_ok=True)
            separator = "" if not existing or existing.endswith("\n") else "\n"
            with exclude.open("a", encoding="utf-8", errors="surrogateescape") as file:
                file.write(f"{separator}{pattern}\n")
            return True

    # --- staging and committing ------------------------------------------------------------------

    def sync_index(
        self, worktree: Path, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> None:
        from orchestra_adapters.git.index import update_index

        with self.lock(worktree):
            update_index(self._git, worktree, paths, self._lazy_versions(worktree, paths, versions))

    def commit(
        self,
        worktree: Path,
        message: str,
        *,
        author: Identity,
        committer: Identity,
        paths: Sequence[str] = (),
        run_hooks: bool = False,
        versions: Mapping[str, FileVersion] | None = None,
    ) -> str:
        args = ["commit", "--quiet", "--no-gpg-sign", "--cleanup=whitespace", "--file=-"]
        versions = self._lazy_versions(worktree, paths, versions) or None
        if versions:
            from orchestra_adapters.git.index import commit_with_versions

            with self.lock(worktree):
                return commit_with_versions(self._git, worktree, args, message, identity_environment(author, committer),
                                            paths, run_hooks, versions)  # fmt: skip
        if paths:
            args += ["--only", "--", *paths]
        with self.lock(worktree):
            if paths:
                self.sync_index(worktree, paths)
            self._git.run(
                worktree,
                args,
                stdin=encode(message),
                env=identity_environment(author, committer),
                hooks=run_hooks,
                work_tree=True,
            )
            return self._git.text(worktree, ["rev-parse", "HEAD"])

    def commit_tree(
        self,
        repo: Path,
        tree: str,
        *,
        parents: Sequence[str],
        message: str,
        author: Identity,
        committer: Identity,
    ) -> str:
        args = ["commit-tree", "--no-gpg-sign", tree]
        for parent in parents:
            args += ["-p", parent]
        return self._git.text(repo, args, stdin=encode(message), env=identity_environment(author, committer))

    def tree_with_files(
        self, worktree: Path, base: str, paths: Sequence[str], versions: Mapping[str, FileVersion] | None = None
    ) -> TreeChange:
        return self._tree_builder(worktree).build(base, list(dict.fromkeys(paths)), versions)

    def capture_files(self, worktree: Path, paths: Sequence[str]) -> Mapping[str, FileVersion]:
        return self._tree_builder(worktree).capture(paths) if paths else {}

    def _lazy_versions(
        self, worktree: Path, paths: Sequence[str], versions: Mapping[str, FileVersion] | None
    ) -> Mapping[str, FileVersion]:
        """In a lazy worktree, `paths` captured as blobs (git ignores files of skip-worktree entries: the index
        takes them only as whole entries, which also clears the mark); elsewhere `versions` as given."""
        from orchestra_adapters.git.lazy import is_lazy

        if not paths or not is_lazy(worktree):
            return versions or {}
        return {**self.capture_files(worktree, [p for p in paths if p not in (versions or {})]), **(versions or {})}

    # --- lazy worktrees --------------------------------------------------------------------------

    def worktree_add_lazy(self, repo: Path, path: Path, branch: str) -> None:
        from orchestra_adapters.git.lazy import add_lazy_worktree

        options = []
        if _index_size(self._info(repo).common_dir) >= SPLIT_INDEX_THRESHOLD:
            options += ["-c", "core.splitIndex=true"]
        with self._worktree_change(repo):
            add_lazy_worktree(self._git, repo, path, branch, options)

    def tree_files(self, worktree: Path) -> TreeFiles | None:
        from orchestra_adapters.git.lazy import GitTreeFiles, is_lazy

        return GitTreeFiles(self._git, Path(worktree)) if is_lazy(worktree) else None

    def materialize(self, worktree: Path) -> bool:
        from orchestra_adapters.git.lazy import materialize

        with self.lock(worktree):
            return materialize(self._git, worktree, _parallel_checkout())

    def _tree_builder(self, worktree: Path) -> TreeBuilder:
        from orchestra_adapters.git.trees import TreeBuilder

        info = self._info(worktree)
        return TreeBuilder(self._git, worktree, info.object_format, self._file_modes(worktree))

    def untracked_matching(self, worktree: Path, patterns: Sequence[str]) -> tuple[str, ...]:
        import tempfile

        if not patterns:
            return ()
        with tempfile.TemporaryDirectory(prefix="orchestra-include-") as scratch:
            rules = Path(scratch) / "patterns"
            rules.write_bytes(encode("".join(f"{pattern}\n" for pattern in patterns)))
            process = self._git.run(
                worktree, ["ls-files", "-z", "--others", "--ignored", f"--exclude-from={rules}"], work_tree=True
            )
        listed = (decode(item) for item in process.stdout.split(b"\0") if item)
        return tuple(path for path in listed if not path.endswith("/"))  # "dir/": a nested repository

    def ignored_paths(self, worktree: Path, paths: Sequence[str]) -> tuple[str, ...]:
        if not paths:
            return ()
        # --no-index skips reading a possibly huge index; tracked files are then dropped using HEAD's tree.
        # check-ignore rejects literal pathspecs, so `./` keeps names like `:(glob)x` from reading as magic.
        process = self._git.run(
            worktree,
            ["check-ignore", "--no-index", "-z", "--stdin"],
            stdin=_nul_list([f"./{path}" for path in paths]),
            env={"GIT_LITERAL_PATHSPECS": "0"},
            ok_codes=(0, 1),
        )
        ignored = [decode(item).removeprefix("./") for item in process.stdout.split(b"\0") if item]
        if not ignored:
            return ()
        listed = self._git.run(
            worktree, ["ls-tree", "-z", "--name-only", "HEAD", "--", *ignored], ok_codes=(0, 128)
        )
        tracked = {decode(item) for item in listed.stdout.split(b"\0") if item}
        return tuple(path for path in ignored if path not in tracked)

    # --- history ---------------------------------------------------------------------------------

    def log(self, repo: Path, rev: str, *, max_count: int | None = None) -> tuple[LogEntry, ...]:
        args = ["log", "-z", f"--format={LOG_FORMAT}"]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        return parse_log(self._git.run(repo, [*args, rev, "--"]).stdout)

    def diff(
        self, repo: Path, old: str | None = None, new: str | None = None, *, paths: Sequence[str] = ()
    ) -> str:
        args = [*_DIFF_OPTIONS, "diff", "--no-color", "--no-ext-diff", "--no-textconv"]
        if old is None:
            args.append("--cached")
        else:
            args += [old] + ([new] if new is not None else [])
        # Two commits or trees: git reads objects only (no textconv, no external diff), so no filter runs.
        both = old is not None and new is not None
        return decode(self._git.run(repo, [*args, "--", *paths], objects_only=both).stdout)

    def trailers(self, repo: Path, rev: str) -> Mapping[str, str]:
        output = self._git.text(repo, ["log", "-1", "--format=%(trailers:only,unfold)", rev, "--"])
        return parse_trailers(output)

    def changed_files(self, repo: Path, rev: str) -> tuple[FileChange, ...]:
        args = ["-c", "log.showRoot=true", "log", "-1", "-z", "--format=", "--name-status", "--no-renames"]
        output = self._git.run(repo, [*args, "-m", "--first-parent", rev, "--"]).stdout
        fields = [decode(item) for item in output.split(b"\0")[:-1]]  # status, path, status, path, ...
        return tuple(
            FileChange(path, status[:1]) for status, path in zip(fields[::2], fields[1::2], strict=True)
        )

    # --- configuration ---------------------------------------------------------------------------

    def config_values(self, repo: Path, key: str) -> tuple[str, ...]:
        process = self._git.run(repo, ["config", "--local", "--null", "--get-all", key], ok_codes=(0, 1))
        return tuple(decode(item) for item in process.stdout.split(b"\0")[:-1])

    def add_config_value(self, repo: Path, key: str, value: str) -> bool:
        with self.lock(repo):
            if value in self.config_values(repo, key):
                return False
            self._git.run(repo, ["config", "--local", "--add", key, value])
            return True

    # --- locking and cached facts ----------------------------------------------------------------

    @contextmanager
    def lock(self, repo: Path) -> Iterator[None]:
        from orchestra_adapters.git.locks import repo_lock

        with repo_lock(self._info(repo).common_dir):
            yield

    @contextmanager
    def _worktree_change(self, repo: Path) -> Iterator[None]:
        """Hold the repository's lock and its fetch lock: a fetch's connectivity check reads every worktree's HEAD,
        which `git worktree add` first writes as a placeholder ("did not send all necessary objects")."""
        from orchestra_adapters.git.locks import fetch_lock

        with self.lock(repo), fetch_lock(self._info(repo).common_dir):
            yield

    def _info(self, path: Path) -> RepositoryInfo:
        return self.repository(Path(path).resolve())

    def _file_modes(self, worktree: Path) -> FileModes:
        key = Path(worktree).resolve()
        with self._cache_lock:
            cached = self._modes.get(key)
        if cached is None:
            output = self._git.text(
                worktree, ["config", "--type=bool", "--default=true", "--get", "core.fileMode"]
            )
            symlinks = self._git.text(
                worktree, ["config", "--type=bool", "--default=true", "--get", "core.symlinks"]
            )
            from orchestra_adapters.git.trees import FileModes

            cached = FileModes(trust_executable_bit=output == "true", symlinks=symlinks == "true")
            with self._cache_lock:
                self._modes[key] = cached
        return cached


def _nul_list(paths: Sequence[str]) -> bytes:
    return b"".join(encode(path) + b"\0" for path in paths)


def _head_file_ref(worktree: Path) -> str | None:
    """The ref HEAD points to, read from the files (no process), or None when that is not possible."""
    dot_git = worktree / ".git"
    try:
        if dot_git.is_file():
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir: "):
                return None
            git_dir = Path(pointer.removeprefix("gitdir: "))
            dot_git = git_dir if git_dir.is_absolute() else worktree / git_dir
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if head.startswith("ref: ") and head != "ref: refs/heads/.invalid":  # .invalid: the reftable backend
        return head.removeprefix("ref: ")
    return "" if len(head) in (40, 64) else None  # a detached HEAD holds the commit id itself


def _index_size(common_dir: Path) -> int:
    try:
        return (common_dir / "index").stat().st_size
    except OSError:
        return 0


def _parallel_checkout() -> list[str]:
    """Parallel checkout (git >= 2.32) roughly halves the time to populate a large worktree."""
    return ["-c", "checkout.workers=0", "-c", "checkout.thresholdForParallelism=100"]


def _may_be_in_repository(path: Path) -> bool:
    """Whether git's discovery could find a repository from `path`: a `.git` entry, or a directory that looks
    like a git dir (a bare repository), in it or above (the environment's `GIT_DIR` is never inherited)."""
    start = path.resolve()  # git walks up from the physical working directory
    for directory in (start, *start.parents):
        if (directory / ".git").exists() or (
            (directory / "HEAD").is_file() and (directory / "objects").is_dir() and (directory / "refs").is_dir()
        ):
            return True
    return False


def _read_exclude(exclude: Path) -> str:
    return exclude.read_text(encoding="utf-8", errors="surrogateescape") if exclude.exists() else ""


def _has_line(exclude: Path, pattern: str) -> bool:
    """Whether `info/exclude` already lists `pattern` (lines are only ever appended, so a yes stays true)."""
    try:
        return pattern in (line.strip() for line in _read_exclude(exclude).splitlines())
    except OSError:
        return False
