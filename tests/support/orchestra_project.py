"""Throwaway Orchestra projects for end-to-end tests: files, the `orchestra` CLI in a subprocess, the store."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.support.git_repos import GitRepo, git

ORCHESTRA = Path(sys.executable).with_name("orchestra")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPTED_PROVIDER = """providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
backend: langgraph
"""


def orchestra(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the `orchestra` CLI (in `env`, default ours); never a traceback, whatever the outcome."""
    result = subprocess.run(
        [str(ORCHESTRA), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**(env if env is not None else os.environ), "NO_COLOR": "1"},
    )
    # Orchestra's own traceback starts a line; a failed command's stderr quoted in a one-line reason does not.
    assert not any(line.startswith("Traceback") for line in result.stderr.splitlines()), result.stderr
    return result


def run_json(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`orchestra <args> --json`, expected to succeed; its JSON document."""
    result = orchestra(*args, "--json", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def copy_example(name: str, target: Path) -> Path:
    """A copy of examples/<name> at `target`."""
    shutil.copytree(EXAMPLES / name, target)
    return target


def write_files(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def checkout_fingerprint(repo: GitRepo) -> dict[str, Any]:
    """Everything a user sees of their checkout: files (bytes), index entries, staged diff, HEAD, branch."""
    files = {
        str(path.relative_to(repo.path)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(repo.path.rglob("*"))
        if path.is_file() and not {".git", ".orchestra"} & set(path.relative_to(repo.path).parts)
    }
    return {
        "files": files,
        "index": repo.git("ls-files", "--stage"),
        "staged": repo.git("diff", "--cached", "--binary"),
        "unstaged": repo.git("diff", "--binary"),
        "head": repo.git("rev-parse", "HEAD"),
        "branch": repo.git("symbolic-ref", "--quiet", "HEAD"),
    }


def trailers(repo: GitRepo, sha: str) -> dict[str, str]:
    """The commit's trailers as git parses them."""
    output = repo.git("log", "-1", "--format=%(trailers:only,unfold)", sha)
    return dict(line.split(": ", 1) for line in output.splitlines() if line)


def committed_files(repo: GitRepo, sha: str) -> list[str]:
    """The paths a commit changed against its parent."""
    output = git(repo.path, "diff-tree", "--root", "--no-commit-id", "-r", "--name-only", sha)
    return sorted(line for line in output.splitlines() if line)


@contextmanager
def open_store(project: Path) -> Iterator[SqliteSessionStore]:
    store = SqliteSessionStore(project / ".orchestra" / "orchestra.db")
    try:
        yield store
    finally:
        store.close()


def session_records(project: Path, session_id: str) -> list[tuple[StoredTurn, object]]:
    """Every turn of the session's history with its decoded record, oldest first."""
    with open_store(project) as store:
        turns = list(history(store, session_id))
    turns.reverse()
    return [(turn, decode_record(turn)) for turn in turns]


def records_of(project: Path, session_id: str, kind: type) -> list[tuple[StoredTurn, Any]]:
    return [
        (turn, record) for turn, record in session_records(project, session_id) if isinstance(record, kind)
    ]


def agent_turns(project: Path, session_id: str) -> list[tuple[StoredTurn, AgentTurn]]:
    return records_of(project, session_id, AgentTurn)


def all_agent_turns(project: Path, session_id: str) -> list[AgentTurn]:
    """The agent turns of the session and of its parallel branches' forked sessions."""
    from orchestra_core.model.records import ParallelExecution

    found = [turn for _, turn in agent_turns(project, session_id)]
    for _, record in records_of(project, session_id, ParallelExecution):
        for branch in record.branch_session_ids:
            found += [turn for _, turn in agent_turns(project, branch)]
    return found
