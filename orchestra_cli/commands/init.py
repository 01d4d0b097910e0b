"""`orchestra init [DIR] [--force]`: a commented orchestra.yaml and a starter pipeline that runs offline."""

import subprocess
from pathlib import Path
from typing import Annotated

import typer

from orchestra_cli.options import JsonOption


def init_project(
    directory: Annotated[
        Path, typer.Argument(help="The project directory (created when missing; default: the current one).")
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the files init writes when they exist.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Start a project: write a commented orchestra.yaml, a starter pipeline.dot and the cassette.yaml that
    lets it run offline, and make the directory a git repository when it is not in one.

    Existing files are never overwritten without --force (exit 2, nothing written). Then
    `orchestra compile pipeline.dot` validates the pipeline and `orchestra run pipeline.dot` runs it.
    """
    from orchestra_cli.errors import fail
    from orchestra_cli.init_templates import FILES, REPO_PATH_LINE

    if directory.exists() and not directory.is_dir():
        raise fail(f"{directory}: not a directory")
    existing = [name for name in FILES if (directory / name).exists() or (directory / name).is_symlink()]
    if existing and not force:
        raise fail(
            f"{directory / existing[0]} already exists; use --force to overwrite {', '.join(existing)}"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        repo_path = _enclosing_repository(directory)
        for name, text in FILES.items():
            if name == "orchestra.yaml" and repo_path not in (None, "."):
                text = text.replace(
                    REPO_PATH_LINE, f"path: {repo_path}  # the git repository this directory is in"
                )
            target = directory / name
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise fail(f"{target}: not a regular file; remove it first")
            target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise fail(f"{directory}: cannot write: {error.strerror or error}") from None
    git_note = _git_repository(directory)
    sandbox_note = _sandbox_offer()
    if json_output:
        from orchestra_cli.output import print_json

        print_json({"directory": str(directory.resolve()), "files": list(FILES), "git": git_note, "sandbox": sandbox_note})
        return
    for name in FILES:
        typer.echo(f"wrote   {directory / name}")
    typer.echo(f"git     {git_note}")
    typer.echo(f"sandbox {sandbox_note}")
    where = "" if directory.resolve() == Path.cwd().resolve() else f"cd {directory} && "
    typer.echo(f"next    {where}orchestra compile pipeline.dot && orchestra run pipeline.dot")


def _sandbox_offer() -> str:
    """Whether the bubblewrap sandbox runs here, and how to turn it on (it is off in the written file)."""
    from orchestra_adapters.process.sandbox import find_bwrap, probe

    bwrap = find_bwrap()
    if bwrap is None:
        return (
            "bubblewrap is not installed; with it (apt-get install bubblewrap) the `sandbox:` lines in "
            "orchestra.yaml confine commands and CLI agents to their worktrees (docs/security.md)"
        )
    problem = probe(bwrap)
    if problem is not None:
        return f"{bwrap} cannot run a sandbox here ({problem}); `orchestra doctor` checks it again"
    return (
        "bubblewrap works here: uncomment the `sandbox:` lines in orchestra.yaml to confine tool nodes, project "
        "tools and CLI agents to their worktrees (docs/security.md)"
    )


def _enclosing_repository(directory: Path) -> str | None:
    """The top level of the git repository `directory` is in, relative to it (`.`, `..`); None outside one."""
    import os
    import shutil

    if shutil.which("git") is None:
        return None
    top = _git(directory, "rev-parse", "--show-toplevel")
    if top.returncode != 0 or not top.stdout.strip():
        return None
    return Path(os.path.relpath(top.stdout.strip(), directory.resolve())).as_posix()


def _git_repository(directory: Path) -> str:
    """Make `directory` a git repository (branch main) with the files committed unless it lies in one; says
    what happened, and what to do when something is left to the user."""
    import shutil

    if shutil.which("git") is None:
        return "git is not installed: install it, then `git init -b main` and commit these files (runs need a commit)"
    inside = _git(directory, "rev-parse", "--is-inside-work-tree")
    if inside.returncode == 0 and inside.stdout.strip() == "true":
        if _git(directory, "rev-parse", "--verify", "-q", "HEAD^{commit}").returncode != 0:
            return "in a git repository with no commit yet: commit something first (runs start from HEAD)"
        return "in a git repository already (commit the new files when you like)"
    from orchestra_cli.init_templates import FILES

    made = _git(directory, "init", "-q", "-b", "main")
    if made.returncode != 0:
        return f"git init failed ({made.stderr.strip()}): run `git init -b main` here and commit these files"
    _git(directory, "add", "--", *FILES)
    committed = _git(directory, "commit", "-q", "-m", "Start an Orchestra project (orchestra init)")
    if committed.returncode != 0:
        return "initialized a repository (branch main); commit these files before a run: git add -A && git commit"
    return "initialized a repository (branch main) and committed these files"


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True, check=False)
