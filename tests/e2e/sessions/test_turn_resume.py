"""Resume and replay at an agent turn: a run killed in the middle of its agent's work (`orchestra run`),
then `orchestra resume SESSION --turn T` / `orchestra replay SESSION --turn T` as a user would type them,
with a real git repo and the scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.turn import AgentTurn
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    agent_turns,
    committed_files,
    open_store,
    orchestra,
    records_of,
    run_json,
    trailers,
    write_files,
)

pytestmark = pytest.mark.slow

CONFIG = SCRIPTED_PROVIDER + """workspace:
  repos:
    app: {path: ../app}
  tools:
    app:
      die: {command: "kill -9 $PPID"}
agents:
  coder:
    tools: [app:die]
"""
PIPELINE = """digraph turns {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [agent="coder", prompt="Write a.py and b.py"]
    review    [prompt="Review"]
    start -> implement -> review -> exit
}
"""
# Turn 0 writes a.py, turn 1 b.py, turn 2 only reads; turn 3's tool kills the runner mid-node.
KILLED = r"""nodes:
  implement:
    - content: "Writing a.py."
      tool_calls: [{name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}]
    - content: "Writing b.py."
      tool_calls: [{name: "app:write-file", args: {path: b.py, content: "B = 2\n"}}]
    - content: "Checking a.py."
      tool_calls: [{name: "app:read-file", args: {path: a.py}}]
    - content: "Stopping."
      tool_calls: [{name: "app:die", args: {}}]
commit_messages: ["Add a.py", "Add b.py"]
"""
# What the resumed agent does next: one more file, then it is done; review answers at once.
GO_ON = r"""nodes:
  implement:
    - content: "Writing c.py."
      tool_calls: [{name: "app:write-file", args: {path: c.py, content: "C = 3\n"}}]
    - content: "Done."
  review: ["Looks good."]
commit_messages: ["Add c.py"]
"""
BRANCH = "orchestra/turns/1"


@frozen
class Killed:
    project: Path
    app: GitRepo
    env: dict[str, str]
    turns: list[tuple[str, AgentTurn]]  # the recorded agent turns: (turn id, record)

    @property
    def worktree(self) -> Path:
        return self.project / ".orchestra" / "worktrees" / "1" / "app"

    def turn_id(self, number: int) -> str:
        return next(turn_id for turn_id, record in self.turns if record.turn_number == number)

    def sha(self, number: int) -> str:
        record = next(record for _, record in self.turns if record.turn_number == number)
        assert record.git_sha is not None
        return record.git_sha

    def run(self, *args: str) -> Any:
        return orchestra(*args, cwd=self.project, env=self.env)


@pytest.fixture
def killed(tmp_path: Path) -> Killed:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    app = make_repo(tmp_path / "app")
    project = tmp_path / "project"
    write_files(project, {"orchestra.yaml": CONFIG, "turns.dot": PIPELINE, "cassette.yaml": KILLED})
    result = orchestra("run", "turns.dot", cwd=project, env=env)
    assert result.returncode == -9, result.stderr + result.stdout
    (project / "cassette.yaml").write_text(GO_ON, encoding="utf-8")
    turns = [(turn.turn_id, record) for turn, record in agent_turns(project, "1")]
    assert [record.turn_number for _, record in turns] == [0, 1, 2]
    return Killed(project, app, env, turns)


def agent_state(project: Path, ref: str | None) -> list[dict[str, Any]]:
    """The conversation LangGraph saved at an agent state reference (what the model had been given, and its reply)."""
    backend = LangGraphBackend(None, None, None, project / ".orchestra" / "agents.db")  # type: ignore[arg-type]
    try:
        return backend.agent_messages(ref or "") or []
    finally:
        backend.close()


def implement_turns(project: Path, session: str) -> list[AgentTurn]:
    return [record for _, record in agent_turns(project, session) if record.node_id == "implement"]


def test_status_lists_the_agent_turns_with_ids_for_turn(killed: Killed) -> None:
    shown = json.loads(killed.run("status", "1", "--json").stdout)
    listed = [t for t in shown["turns"] if t["type"] == "dev.orchestra.AgentTurn"]
    assert [(t["turn_id"], t["node_id"], t["turn_number"]) for t in listed] == [
        (turn_id, "implement", record.turn_number) for turn_id, record in killed.turns
    ]
    assert [t["git_sha"] for t in listed] == [killed.sha(0), killed.sha(1), None]
    assert [t["files_written"] for t in listed] == [["app:a.py"], ["app:b.py"], []]
    text = killed.run("status", "1").stdout
    assert "--turn TURN" in text
    assert all(f"\n{turn_id} " in text for turn_id, _ in killed.turns)


def test_resume_at_a_turn_puts_the_code_there_and_the_agent_continues_with_the_next_turn(killed: Killed) -> None:
    resumed = run_json("resume", "1", "--turn", killed.turn_id(0), cwd=killed.project, env=killed.env)

    assert resumed["status"] == "success" and resumed["session_id"] == "1"
    # the branch went back to turn 0's commit and the new turn committed on top: b.py is gone
    new_head = resumed["repos"]["app"]["head_sha"]
    assert killed.app.git("rev-parse", f"{new_head}~1").strip() == killed.sha(0)
    assert killed.app.head(BRANCH) == new_head and committed_files(killed.app, new_head) == ["c.py"]
    assert sorted(p.name for p in killed.worktree.glob("*.py")) == ["a.py", "c.py"]
    assert git(killed.worktree, "status", "--porcelain").strip() == ""
    # turn 1's commit is not lost
    assert killed.app.git("for-each-ref", "--contains", killed.sha(1), "--format=%(refname)").strip()
    # new turns number on from turn 0 and their commits say so
    records = implement_turns(killed.project, "1")
    assert [r.turn_number for r in records] == [0, 1, 2, 1, 2]
    assert trailers(killed.app, new_head)["Orchestra-Turn"] == "1"
    # the model's next call was given the conversation up to and including turn 0
    saved = agent_state(killed.project, records[3].agent_state_ref)
    assert [m["role"] for m in saved] == ["user", "assistant", "tool", "assistant", "tool"]
    assert saved[1]["content"] == "Writing a.py." and saved[3]["content"] == "Writing c.py."
    assert "Writing b.py." not in [m["content"] for m in saved]
    assert resumed["completed_nodes"][-3:] == ["implement", "review", "exit"]


def test_resume_at_a_read_only_turn_puts_the_code_at_the_latest_earlier_commit(killed: Killed) -> None:
    resumed = run_json("resume", "1", "--turn", killed.turn_id(2), cwd=killed.project, env=killed.env)

    new_head = resumed["repos"]["app"]["head_sha"]
    assert killed.app.git("rev-parse", f"{new_head}~1").strip() == killed.sha(1)
    assert sorted(p.name for p in killed.worktree.glob("*.py")) == ["a.py", "b.py", "c.py"]
    records = implement_turns(killed.project, "1")
    assert [r.turn_number for r in records] == [0, 1, 2, 3, 4]
    saved = agent_state(killed.project, records[3].agent_state_ref)
    assert [m["content"] for m in saved if m["role"] == "assistant"] == [
        "Writing a.py.", "Writing b.py.", "Checking a.py.", "Writing c.py."
    ]


def test_replay_at_a_turn_forks_a_new_session_and_branch_and_leaves_the_original(killed: Killed) -> None:
    with open_store(killed.project) as store:
        before = store.get_session("1").head_turn_id
    original_head = killed.app.head(BRANCH)

    replayed = run_json("replay", "1", "--turn", killed.turn_id(0), cwd=killed.project, env=killed.env)

    session = replayed["session_id"]
    assert replayed["status"] == "success" and session != "1"
    branch = f"orchestra/turns/{session}"
    assert replayed["repos"]["app"]["branch"] == branch and replayed["repos"]["app"]["base_sha"] == killed.sha(0)
    [new_commit] = killed.app.log(f"{killed.sha(0)}..{branch}")
    assert committed_files(killed.app, new_commit) == ["c.py"]
    assert trailers(killed.app, new_commit)["Orchestra-Session"] == session
    # the original session and branch are as they were
    assert killed.app.head(BRANCH) == original_head
    with open_store(killed.project) as store:
        assert store.get_session("1").head_turn_id == before
    assert [r.turn_number for r in implement_turns(killed.project, "1")] == [0, 1, 2]
    # the fork shares the history up to the turn, then has its own turns
    forked = [(turn.turn_id, r) for turn, r in agent_turns(killed.project, session) if r.node_id == "implement"]
    assert [r.turn_number for _, r in forked] == [0, 1, 2]
    assert forked[0][0] == killed.turn_id(0) and forked[1][0] != killed.turn_id(1)
    shown = json.loads(killed.run("status", session, "--json").stdout)
    assert shown["parent_session_id"] == "1" and shown["forked_at_turn"] == killed.turn_id(0)
    saved = agent_state(killed.project, forked[1][1].agent_state_ref)
    assert [m["content"] for m in saved if m["role"] == "assistant"] == ["Writing a.py.", "Writing c.py."]


def test_bad_or_foreign_turn_ids_are_one_line_errors_that_record_nothing(killed: Killed) -> None:
    other = run_json("replay", "1", "--turn", killed.turn_id(1), cwd=killed.project, env=killed.env)["session_id"]
    foreign = next(t for t, r in agent_turns(killed.project, other) if r.turn_number == 2).turn_id
    checkpoint = records_of(killed.project, "1", CheckpointRecord)[0][0].turn_id
    with open_store(killed.project) as store:
        heads = {s.session_id: s.head_turn_id for s in store.list_sessions()}
    branch_head = killed.app.head(BRANCH)

    for args, named in [
        (("resume", "1", "--turn", "99999"), "99999"),
        (("resume", "1", "--turn", "abc"), "abc"),
        (("resume", "1", "--turn", foreign), foreign),
        (("resume", "1", "--turn", checkpoint), "not an agent turn"),
        (("replay", "1", "--turn", foreign), foreign),
        (("replay", "1", "--turn", checkpoint), "not an agent turn"),
        (("replay", "1", "--turn", killed.turn_id(0), "--checkpoint", checkpoint), "not both"),
    ]:
        result = killed.run(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and named in result.stderr, (args, result.stderr)

    with open_store(killed.project) as store:
        assert {s.session_id: s.head_turn_id for s in store.list_sessions()} == heads
    assert killed.app.head(BRANCH) == branch_head
