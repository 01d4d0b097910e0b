"""Interactive mode with the real `claude` against the fake Anthropic API: each human message continues Claude
Code's own session (`--resume`, only the message on stdin), also after a kill and `orchestra resume`; when the
session is gone (a fresh machine) the node warns and replays the conversation in a new prompt."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from orchestra_core.model.turn import AgentTurn
from tests.e2e.cli_agents.conftest import AgentProject
from tests.support.cli_agents import claude_env
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply
from tests.support.orchestra_project import ORCHESTRA, orchestra, records_of, write_files
from tests.support.processes import wait_until

INTERACTIVE = ', agent.mode="interactive"'
REPLAYED = "Conversation with the human so far"  # the header of a prompt that replays the conversation


def _said(request: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) of each user and assistant message of a request to the fake API."""
    said = []
    for message in request["messages"]:
        content = message["content"]
        text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
        if message["role"] in ("user", "assistant"):
            said.append((message["role"], text))
    return said


def _turns(project: AgentProject) -> list[AgentTurn]:
    try:
        return [record for _, record in records_of(project.root, "1", AgentTurn)]
    except Exception:  # the store is being created
        return []


def _answers(project: AgentProject, *answers: str) -> None:
    write_files(project.root, {"answers.yaml": f"implement: {json.dumps(list(answers))}\n"})


def test_the_second_human_message_resumes_the_claude_session(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure(node_attrs=INTERACTIVE)
    _answers(project, "Make it shorter", "/approve")
    with FakeAnthropicAPI([Reply("Draft one."), Reply("Draft two.")]) as api:
        result = project.run(api.base_url, "--answers", "answers.yaml")
        requests = list(api.requests)
    assert result.returncode == 0, result.stderr + result.stdout
    assert json.loads(result.stdout)["node_outcomes"]["implement"] == "success"
    assert len(requests) == 2
    said = _said(requests[1])
    assert "Write a.py and b.py" in said[0][1]  # the first exchange comes from Claude Code's own session
    assert said[1:] == [("assistant", "Draft one."), ("user", "Make it shorter")]
    assert not any(REPLAYED in text for _, text in said)
    turns = _turns(project)
    assert [turn.turn_number for turn in turns] == [0, 1]
    assert turns[0].agent_state_ref and turns[0].agent_state_ref.startswith("claude-code:")
    assert turns[1].agent_state_ref == turns[0].agent_state_ref
    assert "warning" not in result.stderr


def _kill_after_first_reply(project: AgentProject, api: FakeAnthropicAPI) -> None:
    """`orchestra run` with the console chat: "Make it shorter", then SIGKILL once Claude has answered it."""
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "pipeline.dot", "--quiet"],
        cwd=project.root,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
        env={**claude_env(api.base_url, project.home), "NO_COLOR": "1"},
    )
    try:
        assert runner.stdin is not None
        runner.stdin.write("Make it shorter\n")
        runner.stdin.flush()
        assert wait_until(lambda: len(_turns(project)) == 2, 120)
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)


@pytest.mark.slow
def test_kill_mid_conversation_then_resume_continues_the_claude_session(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure(node_attrs=INTERACTIVE)
    _answers(project, "Make it shorter", "Even shorter", "/approve")
    with FakeAnthropicAPI([Reply("Draft one."), Reply("Draft two."), Reply("Draft three.")]) as api:
        _kill_after_first_reply(project, api)
        env = claude_env(api.base_url, project.home)
        resumed = orchestra("resume", "1", "--answers", "answers.yaml", "--json", cwd=project.root, env=env)
        requests = list(api.requests)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert len(requests) == 3
    said = _said(requests[2])
    assert said[1:] == [
        ("assistant", "Draft one."),
        ("user", "Make it shorter"),
        ("assistant", "Draft two."),
        ("user", "Even shorter"),
    ]
    assert not any(REPLAYED in text for _, text in said)
    turns = _turns(project)
    assert [turn.turn_number for turn in turns] == [0, 1, 2]
    assert len({turn.agent_state_ref for turn in turns}) == 1
    assert "could not resume" not in resumed.stderr


@pytest.mark.slow
def test_a_session_claude_no_longer_knows_is_replayed_in_a_new_prompt_with_a_warning(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure(node_attrs=INTERACTIVE)
    _answers(project, "Make it shorter", "Even shorter", "/approve")
    with FakeAnthropicAPI([Reply("Draft one."), Reply("Draft two."), Reply("Draft three.")]) as api:
        _kill_after_first_reply(project, api)
        shutil.rmtree(project.home / ".claude" / "projects")  # a fresh machine: Claude's sessions are gone
        env = claude_env(api.base_url, project.home)
        resumed = orchestra("resume", "1", "--answers", "answers.yaml", "--json", cwd=project.root, env=env)
        requests = list(api.requests)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert json.loads(resumed.stdout)["node_outcomes"]["implement"] == "success"
    session = (_turns(project)[0].agent_state_ref or "").removeprefix("claude-code:")
    assert f"could not resume its session {session}" in resumed.stderr
    assert "No conversation found" in resumed.stderr
    assert len(requests) == 3  # the failed --resume sent no request
    said = _said(requests[2])
    assert len(said) == 1 and said[0][0] == "user"
    prompt = said[0][1]
    assert REPLAYED in prompt and "Write a.py and b.py" in prompt
    assert all(text in prompt for text in ("Draft one.", "Make it shorter", "Draft two.", "Even shorter"))
    last = _turns(project)[-1]
    assert last.agent_state_ref and last.agent_state_ref != f"claude-code:{session}"  # a new session
