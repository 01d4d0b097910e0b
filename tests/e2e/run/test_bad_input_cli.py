"""`run`, `resume` and `replay` validate exactly as `compile` does and refuse bad input before anything is
recorded: an error diagnostic is exit 1 with the diagnostics, bad input exit 2 with one line; neither leaves a
session behind (through the CLI in subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import open_store, orchestra, write_files

GOOD = """digraph good {
    start [shape=Mdiamond]; done [shape=Msquare]
    step [shape=parallelogram, tool_command="echo ok"]
    start -> step -> done
}
"""
# `compile` reports the unknown tool as an error; a simulated run used to ignore it.
UNKNOWN_TOOL = """digraph bad_tools {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [prompt="do it", agent.tools="no-such-tool"]
    start -> work -> done
}
"""


def sessions(project: Path) -> list[dict[str, object]]:
    """Every session `orchestra status --json` lists (none when there is no store yet)."""
    result = orchestra("status", "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout)["sessions"])


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("orchestra: error: "), stderr
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_files(tmp_path, {"good.dot": GOOD, "bad.dot": UNKNOWN_TOOL})
    return tmp_path


def test_compile_and_run_agree_on_an_unknown_tool(project: Path) -> None:
    compiled = orchestra("compile", "bad.dot", cwd=project)
    assert compiled.returncode == 1 and "agent_tools" in compiled.stdout + compiled.stderr
    for backend in ((), ("--backend", "simulate")):
        ran = orchestra("run", "bad.dot", *backend, cwd=project)
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert "error [agent_tools] node work" in ran.stderr and "no-such-tool" in ran.stderr
        assert ran.stderr.splitlines()[-1] == (
            "orchestra: error: bad.dot: 1 validation error; nothing was run (see `orchestra compile`)"
        )
        assert "> work" not in ran.stdout
    as_json = orchestra("run", "bad.dot", "--backend", "simulate", "--json", cwd=project)
    error = json.loads(as_json.stdout)["error"]
    assert as_json.returncode == 1 and [d["rule"] for d in error["diagnostics"]] == ["agent_tools"]
    assert sessions(project) == []


def test_resume_and_replay_validate_the_pipeline_they_would_run(project: Path) -> None:
    ran = orchestra("run", "good.dot", "--backend", "simulate", "--json", cwd=project)
    assert ran.returncode == 0, ran.stderr
    session = json.loads(ran.stdout)["session_id"]
    with open_store(project) as store:
        checkpoint = store.latest_checkpoint(session)
        assert checkpoint is not None
    logs = project / ".orchestra" / "runs" / session
    attempts = [
        ("replay", session, "--checkpoint", checkpoint.turn_id, "--pipeline", "bad.dot", "--backend", "simulate"),
        ("resume", "--logs-root", logs, "bad.dot", "--backend", "simulate"),
    ]
    for args in attempts:
        result = orchestra(*args, cwd=project)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "error [agent_tools] node work" in result.stderr
        assert result.stderr.splitlines()[-1].endswith("nothing was run (see `orchestra compile`)")
    assert [s["session_id"] for s in sessions(project)] == [session]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--logs-root", "a-file/logs"), "a-file/logs: --logs-root cannot be created: Not a directory"),
        (("--logs-root", "a-file"), "a-file: --logs-root must be a directory"),
        (("--backend", "nope"), "unknown backend 'nope'; available: simulate, "),
        (("--set", "no-equals-sign"), "--set expects KEY=VALUE"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_creates_no_session(
    project: Path, args: tuple[str, ...], message: str
) -> None:
    (project / "a-file").write_text("not a directory\n", encoding="utf-8")
    for json_flag in ((), ("--json",)):
        result = orchestra("run", "good.dot", *args, *json_flag, cwd=project)
        assert result.returncode == 2, result.stdout + result.stderr
        assert message in one_error_line(result.stderr)
        if json_flag:
            assert message in json.loads(result.stdout)["error"]["message"]
    assert sessions(project) == []


def test_bad_input_to_resume_and_replay_is_exit_2_and_records_nothing(project: Path) -> None:
    ran = orchestra("run", "good.dot", "--backend", "simulate", "--json", cwd=project)
    session = json.loads(ran.stdout)["session_id"]
    with open_store(project) as store:
        checkpoint = store.latest_checkpoint(session)
        assert checkpoint is not None
        before = len(store.list_sessions())
    for bad in (("--backend", "nope"), ("--set", "=value")):
        for args in (("resume", session), ("replay", session, "--checkpoint", checkpoint.turn_id)):
            result = orchestra(*args, *bad, cwd=project)
            assert result.returncode == 2, result.stdout + result.stderr
            one_error_line(result.stderr)
    with open_store(project) as store:
        assert len(store.list_sessions()) == before


def test_an_unusable_workspace_repo_is_exit_2_before_a_session_exists(project: Path) -> None:
    """The quick start before `git init`: workspace.repos names a directory that is not a repository."""
    write_files(project, {"orchestra.yaml": "workspace:\n  repos:\n    project:\n      path: .\n"})
    result = orchestra("run", "good.dot", "--backend", "simulate", cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "workspace.repos.project.path" in one_error_line(result.stderr)
    assert "is not a git repository" in result.stderr
    assert sessions(project) == []

    make_repo(project, {".gitignore": ".orchestra/\n"})  # fixed: the same command runs
    again = orchestra("run", "good.dot", "--backend", "simulate", "--json", cwd=project)
    assert again.returncode == 0, again.stderr
    assert [s["status"] for s in sessions(project)] == ["success"]


def test_resuming_a_run_directory_the_store_does_not_know_records_nothing_when_refused(
    project: Path, tmp_path: Path
) -> None:
    """`resume --logs-root` of a run whose session is not in this store continues it as a new session; that
    session is created only once the checks pass (here: the workspace repo is gone)."""
    make_repo(project, {".gitignore": ".orchestra/\n"})
    write_files(project, {"orchestra.yaml": "workspace:\n  repos:\n    project:\n      path: .\n"})
    logs = tmp_path / "logs"
    first = orchestra("run", "good.dot", "--backend", "simulate", "--logs-root", logs, cwd=project)
    assert first.returncode == 0, first.stderr
    (project / ".orchestra" / "orchestra.db").unlink()  # a store that never saw that run
    write_files(project, {"orchestra.yaml": "workspace:\n  repos:\n    project:\n      path: ../gone\n"})

    refused = orchestra("resume", "--logs-root", logs, "good.dot", "--backend", "simulate", cwd=project)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "workspace.repos.project.path" in one_error_line(refused.stderr)
    assert sessions(project) == []
