"""The generated repository the git benches share: 20,000 small files in 2,000 directories, one commit,
built by plain git with a fixed identity and no global or system configuration."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

FILES = 20_000
ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` with the bench environment; its stdout (raises on failure)."""
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def file_path(number: int) -> str:
    """The repo-relative path of generated file `number`."""
    return f"pkg{number % 100:02d}/mod{number // 100 % 20:02d}/file{number}.py"


def generate_repo(root: Path, files: int = FILES) -> Path:
    """A repository at `root/repo` with `files` generated files committed on `main`."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "-b", "main")
    for number in range(files):
        path = repo / file_path(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n" * 5)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "generated")
    return repo


# --- one large repository per bench run ----------------------------------------------------------------------

MONOREPO_FILES = 100_000
# Where `make bench` keeps the repositories it generates for one bench run (a directory it removes afterwards).
RUN_DIRECTORY_VARIABLE = "ORCHESTRA_BENCH_REPOS"
_run_directory: Path | None = None


def shared_repo(files: int = MONOREPO_FILES) -> Path:
    """The generated repository of `files` files for this bench run, made once and reused by every script.

    It lives under `$ORCHESTRA_BENCH_REPOS` (set by `make bench`) as `repo-<files>/repo`, or, without it, under a
    temporary directory removed when this process exits. Generated with `git fast-import` (one pack, as a real
    monorepo's objects are) then checked out; the same paths and contents as `generate_repo`. Callers share it:
    they must not change its checkout, index or `main`; they name their branches and worktrees with their own
    prefix, put worktrees in their own directories, and may leave them (the directory goes with the run).
    """
    holder = _repos_directory() / f"repo-{files}"
    repo = holder / "repo"
    ready = holder / "ready"
    if ready.exists():
        return repo
    if holder.exists():  # a run that died while generating: start again
        import shutil

        shutil.rmtree(holder)
    holder.mkdir(parents=True)
    _fast_import_repo(repo, files)
    ready.write_text("ok\n")
    return repo


def _repos_directory() -> Path:
    global _run_directory
    configured = os.environ.get(RUN_DIRECTORY_VARIABLE)
    if configured:
        return Path(configured)
    if _run_directory is None:
        import atexit
        import shutil
        import tempfile

        _run_directory = Path(tempfile.mkdtemp(prefix="bench-repos-"))
        atexit.register(shutil.rmtree, _run_directory, ignore_errors=True)
    return _run_directory


def _fast_import_repo(repo: Path, files: int) -> None:
    """`files` generated files committed on `main` through fast-import, then checked out (a user's checkout)."""
    repo.mkdir()
    git(repo, "init", "--quiet", "-b", "main")
    lines = [b"commit refs/heads/main\n", b"committer Bench <bench@example.com> 1700000000 +0000\n",
             b"data 9\ngenerated\n"]  # fmt: skip
    for number in range(files):
        content = f"VALUE = {number}\n".encode() * 5
        lines.append(b"M 100644 inline %s\ndata %d\n%s\n" % (file_path(number).encode(), len(content), content))
    stream = b"".join(lines)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, env=ENV, input=stream, check=True)
    git(repo, "-c", "checkout.workers=0", "reset", "--quiet", "--hard", "main")
