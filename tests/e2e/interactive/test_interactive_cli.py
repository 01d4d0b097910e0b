"""Interactive mode through `orchestra run`: scripted replies from --answers, /approve, /reject, /done,
--auto-approve, and a run killed mid-conversation that `orchestra resume` continues with the next reply."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from orchestra_core.model.turn import AgentTurn
from tests.support.chat_project import DRAFTS, agent_state, cassette, chat_project, conversation
from tests.support.orchestra_project import ORCHESTRA, orchestra, records_of, run_json
from tests.support.processes import wait_until

PROMPT = "Summarize the review"


def test_scripted_replies_reach_the_agent_and_approve_ends_the_node(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p", ["Make it shorter", "Even shorter", "/approve"])
    result = run_json("run", "chat.dot", "--answers", "answers.yaml", cwd=project)
    assert result["status"] == "success" and result["node_outcomes"]["synth"] == "success"
    assert conversation(project) == [
        (DRAFTS[0], "Make it shorter"),
        (DRAFTS[1], "Even shorter"),
        (DRAFTS[2], "/approve"),
    ]
    said = [(role, text) for role, text in agent_state(project) if role in ("human", "ai")]
    assert said[1:] == [
        ("ai", DRAFTS[0]),
        ("human", "Make it shorter"),
        ("ai", DRAFTS[1]),
        ("human", "Even shorter"),
        ("ai", DRAFTS[2]),
    ]
    assert PROMPT in said[0][1]
    response = (project / ".orchestra" / "runs" / "1" / "synth" / "response.md").read_text()
    assert "approved" in response


def test_each_human_message_is_stored_before_the_agent_turn_it_causes(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p", ["Make it shorter", "/done"])
    run_json("run", "chat.dot", "--answers", "answers.yaml", cwd=project)
    from tests.support.orchestra_project import session_records

    kinds = [
        type(record).__name__
        for _, record in session_records(project, "1")
        if type(record).__name__ in ("AgentTurn", "HumanInteraction")
    ]
    assert kinds == ["AgentTurn", "HumanInteraction", "AgentTurn", "HumanInteraction"]


def test_reject_fails_the_node(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p", ["Make it shorter", "/reject"])
    result = orchestra("run", "chat.dot", "--answers", "answers.yaml", "--json", cwd=project)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["node_outcomes"]["synth"] == "fail"
    assert "rejected" in document["failure_reason"]
    assert conversation(project) == [(DRAFTS[0], "Make it shorter"), (DRAFTS[1], "/reject")]


def test_done_keeps_the_agents_last_outcome_and_running_out_of_replies_is_done(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p", ["Make it shorter"])
    result = orchestra("run", "chat.dot", "--answers", "answers.yaml", "--json", cwd=project)  # stdin: EOF
    assert result.returncode == 0, result.stderr
    assert conversation(project) == [(DRAFTS[0], "Make it shorter"), (DRAFTS[1], "/done")]
    response = (project / ".orchestra" / "runs" / "1" / "synth" / "response.md").read_text()
    assert response == DRAFTS[1]


def test_auto_approve_runs_an_interactive_node_autonomously(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p")
    result = run_json("run", "chat.dot", "--auto-approve", cwd=project)
    assert result["status"] == "success"
    assert conversation(project) == []
    assert len(records_of(project, "1", AgentTurn)) == 1


@pytest.mark.slow
def test_kill_mid_conversation_and_resume_continues_with_the_next_reply(tmp_path: Path) -> None:
    project = chat_project(tmp_path / "p", ["Make it shorter", "Even shorter", "/approve"])
    runner = subprocess.Popen(  # the console chat: one line on stdin, then it waits for the next
        [str(ORCHESTRA), "run", "chat.dot", "--quiet"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        assert runner.stdin is not None
        runner.stdin.write("Make it shorter\n")
        runner.stdin.flush()
        store = project / ".orchestra" / "orchestra.db"
        assert wait_until(lambda: store.exists() and len(_agent_turns(project)) == 2, 60)
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    assert conversation(project) == [(DRAFTS[0], "Make it shorter")]
    (project / "cassette.yaml").write_text(cassette(DRAFTS[2]), encoding="utf-8")  # what is left to say
    resumed = run_json("resume", "1", "--answers", "answers.yaml", cwd=project)
    assert resumed["status"] == "success"
    assert conversation(project) == [
        (DRAFTS[0], "Make it shorter"),
        (DRAFTS[1], "Even shorter"),
        (DRAFTS[2], "/approve"),
    ]
    assert [turn.turn_number for turn in _agent_turns(project)] == [0, 1, 2]
    said = [(role, text) for role, text in agent_state(project) if role in ("human", "ai")]
    assert said[1:] == [
        ("ai", DRAFTS[0]),
        ("human", "Make it shorter"),
        ("ai", DRAFTS[1]),
        ("human", "Even shorter"),
        ("ai", DRAFTS[2]),
    ]


def _agent_turns(project: Path) -> list[AgentTurn]:
    try:
        return [record for _, record in records_of(project, "1", AgentTurn)]
    except Exception:  # the store is being created
        return []
