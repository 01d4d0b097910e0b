"""`resume` and `replay` of an unknown session are bad input (exit 2) and create nothing anywhere: no
`.orchestra/`, no store file, no lock file, no session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.sessions.projects import Project
from tests.support.orchestra_project import orchestra

UNKNOWN = [("resume", "12345"), ("replay", "12345", "--checkpoint", "1")]


def _tree(root: Path) -> list[str]:
    """Every path below `root` (SQLite's transient -wal/-shm files aside)."""
    return sorted(
        str(path.relative_to(root)) for path in root.rglob("*") if not path.name.endswith(("-wal", "-shm"))
    )


@pytest.mark.parametrize("command", UNKNOWN, ids=lambda command: command[0])
def test_an_unknown_session_in_an_empty_directory_creates_nothing(tmp_path: Path, command: tuple[str, ...]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = orchestra(*command, cwd=empty)
    assert result.returncode == 2
    assert result.stderr.startswith("orchestra: error: no session '12345': there is no session store at ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert _tree(tmp_path) == ["empty"]


@pytest.mark.parametrize("command", UNKNOWN, ids=lambda command: command[0])
def test_an_unknown_session_in_a_project_with_sessions_changes_nothing(
    project: Project, command: tuple[str, ...]
) -> None:
    assert project.run_json("run", "steps.dot")["status"] == "success"
    before = _tree(project.root)
    with project.open_store() as store:
        sessions = [info.session_id for info in store.list_sessions()]
    result = project.cli(*command)
    assert result.returncode == 2
    assert result.stderr.startswith("orchestra: error: no session '12345' in session store ")
    assert _tree(project.root) == before
    assert not (project.root / ".orchestra" / "locks" / "12345.lock").exists()
    with project.open_store() as store:
        assert [info.session_id for info in store.list_sessions()] == sessions
