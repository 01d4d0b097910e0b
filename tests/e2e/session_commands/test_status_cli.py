"""`orchestra status` against real runs: the quick start's agent turns and commits, failures and retries,
parallel branches, replays, unknown sessions, and no LLM framework imported on the way."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.support.environment import hermetic_env
from tests.support.git_repos import git
from tests.support.orchestra_project import copy_example, orchestra, run_json, write_files

DESIGN_ROW_KEYS = {"session_id", "pipeline", "status", "started_at", "ended_at"}
DESIGN_SESSION_KEYS = {"session_id", "pipeline", "status", "nodes", "turns"}
DESIGN_NODE_KEYS = {"id", "status", "attempts", "duration_s"}
DESIGN_TURN_KEYS = {
    "turn_id", "type", "node_id", "turn_number", "git_sha", "commit_message", "files_written", "model", "provider",
}
RETRIED = """digraph retried {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="echo broken >&2; exit 3", max_retries=2, retry_initial_delay="10ms"]
    start -> check -> done
}
"""
FAN = """digraph fan {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; left [prompt=l]; right [prompt=r]; merge [shape=tripleoctagon]
    start -> fan
    fan -> left -> merge
    fan -> right -> merge
    merge -> done
}
"""
LINEAR = """digraph linear {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt=p]; build [prompt=b]
    start -> plan -> build -> done
}
"""
HEAVY = ("langchain", "langchain_core", "langgraph", "mcp", "httpx", "openai", "anthropic")
PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr))
sys.argv = ["orchestra", *sys.argv[1:]]
from orchestra_cli.main import main
main()
"""


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The README quick start, run once: session 1 with agent turns committed to orchestra/quickstart/1."""
    env = hermetic_env(tmp_path_factory.mktemp("home"))
    root = copy_example("quickstart", tmp_path_factory.mktemp("quickstart") / "project")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    ran = orchestra("run", "pipeline.dot", cwd=root, env=env)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    return root, env


def test_the_session_list_has_design_md_fields(quickstart: tuple[Path, dict[str, str]]) -> None:
    root, env = quickstart
    document = run_json("status", cwd=root, env=env)
    (row,) = document["sessions"]
    assert row.keys() >= DESIGN_ROW_KEYS
    assert (row["session_id"], row["pipeline"], row["status"], row["nodes_run"]) == ("1", "quickstart", "success", 6)
    started, ended = (datetime.fromisoformat(row[key]) for key in ("started_at", "ended_at"))
    assert started.utcoffset() is not None and started.utcoffset().total_seconds() == 0 and ended >= started
    text = orchestra("status", cwd=root, env=env)
    header, line = text.stdout.splitlines()
    assert header.split() == ["session", "pipeline", "status", "started", "duration", "nodes", "cost", "origin"]
    assert line.split()[:3] == ["1", "quickstart", "success"] and line.split()[-1] == "6"


def test_one_session_lists_each_agent_turn_with_its_commit(quickstart: tuple[Path, dict[str, str]]) -> None:
    root, env = quickstart
    document = run_json("status", "1", cwd=root, env=env)
    assert document.keys() >= DESIGN_SESSION_KEYS and document["status"] == "success"
    assert [node["id"] for node in document["nodes"]] == ["start", "plan", "implement", "check", "review", "exit"]
    assert all(node.keys() >= DESIGN_NODE_KEYS and node["attempts"] == 1 for node in document["nodes"])
    implement = document["nodes"][2]
    assert implement["agent_turns"] == 3 and implement["tokens"]["total_tokens"] > 0 and implement["duration_s"] > 0
    assert all(turn.keys() >= DESIGN_TURN_KEYS for turn in document["turns"])
    agents = [t for t in document["turns"] if t["type"] == "dev.orchestra.AgentTurn"]
    assert [(t["node_id"], t["turn_number"]) for t in agents] == [
        ("plan", 0), ("implement", 0), ("implement", 1), ("implement", 2), ("review", 0), ("review", 1),
    ]
    branch = "orchestra/quickstart/1"
    shas = [git(root, "rev-parse", f"{branch}~1").strip(), git(root, "rev-parse", branch).strip()]
    committed = [t for t in agents if t["git_sha"]]
    assert [t["git_sha"] for t in committed] == shas
    assert [t["commit_message"].splitlines()[0] for t in committed] == [
        "Add hello.py with a greet() function", "Add a test for greet()",
    ]
    assert [t["files_written"] for t in committed] == [["project:hello.py"], ["project:test_hello.py"]]
    assert {(t["model"], t["provider"]) for t in agents} == {("scripted", "scripted")}
    assert document["repos"]["project"]["head_sha"] == shas[1] and document["repos"]["project"]["branch"] == branch
    checkpoints = [t for t in document["turns"] if t["type"] == "dev.orchestra.Checkpoint"]
    assert [t["node_id"] for t in checkpoints] == [None, "start", "plan", "implement", "check", "review", "exit"]

    text = orchestra("status", "1", cwd=root, env=env).stdout
    assert text.splitlines()[:2] == ["session 1: quickstart (Quick start)", text.splitlines()[1]]
    assert text.splitlines()[1].startswith("status   success, ended ")
    assert f"{shas[0][:8]} Add hello.py with a greet() function" in text
    assert "project:write-file" in text and "project:test_hello.py" in text
    assert f"project  {branch}" in text and "orchestra replay 1 --checkpoint TURN" in text


def _imported_roots(root: Path, env: dict[str, str], *args: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=root, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["status"], ["status", "1", "--json"], ["status", "1"]])
def test_status_imports_no_llm_framework(quickstart: tuple[Path, dict[str, str]], args: list[str]) -> None:
    root, env = quickstart
    roots = _imported_roots(root, env, *args)
    assert "orchestra_core" in roots and "orchestra_adapters" in roots  # the probe saw the store being read
    assert not roots & set(HEAVY), sorted(roots & set(HEAVY))


def test_a_failed_session_shows_its_error_and_counts_retries(tmp_path: Path) -> None:
    write_files(tmp_path, {"retried.dot": RETRIED})
    assert orchestra("run", "retried.dot", "--quiet", cwd=tmp_path).returncode == 1
    document = run_json("status", "1", cwd=tmp_path)
    assert document["status"] == "fail" and "exit" in document["error"]
    (check,) = [node for node in document["nodes"] if node["id"] == "check"]
    assert (check["status"], check["attempts"], check["retries"]) == ("fail", 3, 2)
    assert check["failure_reason"] == "exit code 3: broken"
    retrying = [t for t in document["turns"] if t["type"] == "dev.orchestra.NodeExecution" and t["event"] == "retrying"]
    assert [t["attempt"] for t in retrying] == [2, 3]
    text = orchestra("status", "1", cwd=tmp_path).stdout
    assert "error    stage check failed: exit code 3: broken" in text
    assert ["2", "check", "tool", "fail", "3"] in [line.split()[:5] for line in text.splitlines()]
    assert run_json("status", cwd=tmp_path)["sessions"][0]["status"] == "fail"


def test_parallel_branches_are_shown_with_the_run_and_hidden_from_the_list(tmp_path: Path) -> None:
    write_files(tmp_path, {"fan.dot": FAN})
    assert orchestra("run", "fan.dot", "--quiet", cwd=tmp_path).returncode == 0
    assert [row["session_id"] for row in run_json("status", cwd=tmp_path)["sessions"]] == ["1"]
    everything = run_json("status", "--all", cwd=tmp_path)["sessions"]
    assert sorted((row["branch"], row["parent_session_id"]) for row in everything if row["branch"]) == [
        ("fan:left", "1"), ("fan:right", "1"),
    ]
    listed = orchestra("status", "--all", cwd=tmp_path).stdout
    assert "branch fan:left of 1" in listed and "branch fan:right of 1" in listed
    document = run_json("status", "1", cwd=tmp_path)
    branches = {b["branch"]: b["session_id"] for b in document["branches"]}
    nodes = {node["id"]: node for node in document["nodes"]}
    assert (nodes["left"]["branch"], nodes["left"]["session_id"]) == ("fan:left", branches["fan:left"])
    assert nodes["right"]["branch"] == "fan:right" and nodes["fan"]["branch"] is None
    assert {t["session_id"] for t in document["turns"]} == {"1", *branches.values()}
    text = orchestra("status", "1", cwd=tmp_path).stdout
    assert "fan:left = session" in text and any(l.split()[1:2] == ["left"] and l.endswith("fan:left") for l in text.splitlines())  # noqa: E741


def test_a_replay_shows_what_it_was_forked_from(tmp_path: Path) -> None:
    write_files(tmp_path, {"linear.dot": LINEAR})
    assert orchestra("run", "linear.dot", "--quiet", cwd=tmp_path).returncode == 0
    first = run_json("status", "1", cwd=tmp_path)
    (after_plan,) = [c["turn_id"] for c in first["checkpoints"] if c["node_id"] == "plan"]
    assert orchestra("replay", "1", "--checkpoint", after_plan, "--quiet", cwd=tmp_path).returncode == 0
    replay = run_json("status", "2", cwd=tmp_path)
    assert (replay["parent_session_id"], replay["spawn_reason"], replay["forked_at_turn"]) == ("1", "replay", after_plan)
    assert [n["id"] for n in replay["nodes"]] == ["start", "plan", "build", "done"]
    rows = orchestra("status", cwd=tmp_path).stdout.splitlines()
    assert rows[1].split()[0] == "2" and rows[1].endswith("replay of 1")
    assert f"origin   replay of session 1, forked at turn {after_plan}" in orchestra("status", "2", cwd=tmp_path).stdout


def test_unknown_sessions_and_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    listed = orchestra("status", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.startswith("no sessions yet in ")
    assert run_json("status", cwd=tmp_path) == {"sessions": []}
    missing = orchestra("status", "3", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr.startswith("orchestra: error: no session '3'") and len(missing.stderr.splitlines()) == 1
    assert not (tmp_path / ".orchestra").exists()  # looking never creates a store

    write_files(tmp_path, {"linear.dot": LINEAR})
    assert orchestra("run", "linear.dot", "--quiet", cwd=tmp_path).returncode == 0
    for args in (["status", "9"], ["status", "x y"], ["status", "9", "--json"]):
        result: Any = orchestra(*args, cwd=tmp_path)
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith("orchestra: error: no session")
        if "--json" in args:  # the error as a document on stdout
            assert json.loads(result.stdout)["error"]["message"] == result.stderr.removeprefix("orchestra: error: ").strip()
        else:
            assert result.stdout == ""
    assert orchestra("status", "--limit", "0", cwd=tmp_path).returncode == 2
    assert orchestra("status", "--config", "nope.yaml", cwd=tmp_path).returncode == 2


def _long_session(project: Path, agent_turns: int) -> str:
    """A session of one node whose agent took `agent_turns` turns, recorded through the store API."""
    from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
    from orchestra_core.model import records as r
    from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall
    from orchestra_core.ports.session_store import SessionMetadata
    from orchestra_core.session import api

    with SqliteSessionStore(project / ".orchestra" / "orchestra.db") as store:
        session = store.create_session(SessionMetadata(pipeline="long")).session_id
        api.append_record(store, session, r.NodeExecution("work", r.NodeEvent.STARTED, "codergen"))
        for number in range(agent_turns):
            api.append_record(
                store, session,
                AgentTurn(
                    "work", number, f"model-{number}", "p", tool_calls=(ToolCall("project:write-file", {}),),
                    files_written=(f"project:f{number}.py",), token_usage=TokenUsage(10, 1),
                ),
            )
    return session


def test_one_session_shows_its_last_50_agent_turns_and_all_of_them_with_all(tmp_path: Path) -> None:
    session = _long_session(tmp_path, 53)
    text = orchestra("status", session, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    shown = [line.split()[3] for line in text.stdout.splitlines() if " model-" in line]
    assert shown == [f"model-{n}" for n in range(3, 53)]
    # Only the shown turns are read with their tools and files (the others are counted, not decoded in full).
    rows = [line.split() for line in text.stdout.splitlines() if " model-" in line]
    assert [row[4:6] for row in rows] == [["project:write-file", f"project:f{n}.py"] for n in range(3, 53)]
    assert ", the last 50 of 53" in text.stdout
    assert f"(3 earlier agent turns not shown; orchestra status {session} --all shows every one)" in text.stdout
    assert "53 agent turns" in text.stdout  # the header still counts every one

    every = orchestra("status", session, "--all", cwd=tmp_path)
    assert every.returncode == 0, every.stderr
    assert [line.split()[3] for line in every.stdout.splitlines() if " model-" in line] == [
        f"model-{n}" for n in range(53)
    ]
    assert "not shown" not in every.stdout and "the last 50" not in every.stdout
    assert len(run_json("status", session, "--json", cwd=tmp_path)["turns"]) == 54  # --json lists every turn
