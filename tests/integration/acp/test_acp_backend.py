"""The ACP backend through the library API, against the stand-in ACP agent (tests/support/acp_agent.py): turns and
their commits, the file-system methods through the path guard, the permission policy, and each way a conversation
ends."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestra_adapters.backends.acp import create_acp_backend
from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_adapters.process.sandbox import agent_sandbox
from orchestra_core import parse_pipeline, run_pipeline
from orchestra_core.model.events import AgentActivity, AgentTurnCompleted
from orchestra_core.model.settings import (
    AcpSettings,
    BudgetSettings,
    OrchestraSettings,
    RepoSettings,
    SandboxSettings,
    WorkspaceSettings,
)
from orchestra_core.model.turn import AgentTurn
from orchestra_core.runs.ports import AgentRuntime
from tests.support.git_repos import GitRepo, git
from tests.support.processes import alive, kill_quietly, wait_until
from tests.support.sandbox import needs_bwrap

STAND_IN = Path(__file__).resolve().parents[2] / "support" / "acp_agent.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write("README.md", "hi\n")
    GitRepo(root).write(".gitignore", ".orchestra/\n")
    GitRepo(root).commit_all("initial")
    return root


class Run:
    def __init__(self, result: Any, events: list[object]) -> None:
        self.result = result
        self.events = events

    @property
    def turns(self) -> list[AgentTurn]:
        return [event.turn for event in self.events if isinstance(event, AgentTurnCompleted)]


def run(
    project: Path,
    tmp_path: Path,
    script: dict[str, Any],
    node_attrs: str = "",
    timeout: float | None = None,
    sandbox: SandboxSettings | None = None,
    budget: BudgetSettings | None = None,
    auth_method: str | None = None,
) -> Run:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    graph = parse_pipeline(
        f'digraph g {{ start [shape=Mdiamond]; exit [shape=Msquare]; impl [prompt="Build it"{node_attrs}]; '
        "start -> impl -> exit }"
    )
    settings = OrchestraSettings(
        workspace=WorkspaceSettings(repos={"project": RepoSettings(path=str(project))}),
        sandbox=sandbox or SandboxSettings(),
        budget=budget or BudgetSettings(),
    )
    acp = AcpSettings(
        command=(sys.executable, str(STAND_IN), str(path)), timeout=timeout, auth_method=auth_method
    )

    def factory(runtime: AgentRuntime) -> Any:
        return create_acp_backend(acp, runtime, agent_sandbox(settings))

    events: list[object] = []
    result = run_pipeline(
        graph,
        settings=settings,
        project_root=project,
        git=SubprocessGit(),
        backend=factory,
        on_event=events.append,
    )
    return Run(result, events)


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {
        "mcp": {"id": call_id, "tool": "project__write-file", "arguments": {"path": path, "content": content}}
    }


def trailers(project: Path, sha: str) -> str:
    return git(project, "log", "-1", "--format=%(trailers)", sha)


def test_each_model_response_is_a_turn_committed_with_the_files_its_tool_calls_wrote(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        {"thought": "planning"},
        {"message": "I will write a."},
        write("c1", "a.py", "A = 1\n"),
        {"message": "Now b, with the client's file system."},
        {"fs_write": {"id": "c2", "path": "b.py", "content": "B = 2\n"}},
        {"message": "Done."},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    turns = outcome.turns
    assert [t.files_written for t in turns] == [("project:a.py",), ("project:b.py",), ()]
    assert [t.turn_number for t in turns] == [0, 1, 2]
    assert turns[0].messages[0]["content"] == "I will write a."
    assert [c.name for c in turns[0].tool_calls] == ["project:write-file"]
    assert [c.name for c in turns[1].tool_calls] == ["WriteFile b.py", "project:write-file"]
    assert turns[2].messages[0]["content"] == "Done."
    assert all(t.provider == "acp" and t.agent_state_ref == "acp:standin-session-1" for t in turns)
    for turn in turns[:2]:
        assert turn.git_sha is not None
        assert "Orchestra-Node: impl" in trailers(project, turn.git_sha)
    assert git(project, "show", f"{turns[1].git_sha}:b.py") == "B = 2\n"


def test_the_agents_text_and_tool_calls_are_told_live_before_their_turn_ends(project: Path, tmp_path: Path) -> None:
    steps = [
        {"message": "I will write a."},
        write("c1", "a.py", "A = 1\n"),
        {"message": "Now b."},
        {"fs_write": {"id": "c2", "path": "b.py", "content": "B = 2\n"}},
        {"message": "Done."},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    told = [event for event in outcome.events if isinstance(event, AgentActivity)]
    first_turn_ended = next(i for i, e in enumerate(outcome.events) if isinstance(e, AgentTurnCompleted))
    assert [(e.activity, e.tool) for e in told[:3]] == [
        ("text", ""),
        ("tool_call", "project:write-file"),
        ("tool_result", "project:write-file"),
    ]
    assert told[0].text == "I will write a." and json.loads(told[1].text)["path"] == "a.py"
    assert outcome.events.index(told[1]) < first_turn_ended
    assert {e.node_id for e in told} == {"impl"}
    assert any(e.activity == "tool_call" and e.tool == "project:write-file" and "b.py" in e.text for e in told)
    assert told[-1].activity == "text" and told[-1].text == "Done."


def project_worktree(outcome: Run) -> str:
    """The worktree the node ran in (its first turn's state is the stand-in's; the path is in its reads)."""
    reads = [call for turn in outcome.turns for call in turn.tool_calls if call.name.startswith("ReadFile")]
    return str(Path(reads[0].args["file_path"]).parent)


def failed_calls(turns: list[AgentTurn]) -> dict[str, str]:
    return {
        call.call_id: call.error or "" for turn in turns for call in turn.tool_calls if call.error is not None
    }


def test_fs_write_text_file_is_confined_to_the_worktree_like_orchestras_tools(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    GitRepo(project).commit_all("a link leaving the repo")
    steps = [
        {"fs_write": {"id": "dots", "path": "../escaped.txt", "content": "x"}},
        {"fs_write": {"id": "abs", "path": str(tmp_path / "abs.txt"), "content": "x"}},
        {"fs_write": {"id": "git", "path": ".git/hooks/post-commit", "content": "#!/bin/sh\n"}},
        {"fs_write": {"id": "state", "path": ".orchestra/evil", "content": "x"}},
        {"fs_write": {"id": "link", "path": "link/evil.txt", "content": "x"}},
        {"fs_write": {"id": "fine", "path": "src/ok.txt", "content": "ok\n"}},
        {"message": "done"},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    refused = failed_calls(outcome.turns)
    assert set(refused) >= {"dots", "abs", "git", "state", "link"} and "fine" not in refused
    assert "outside the node's worktree" in refused["abs"]
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "abs.txt").exists()
    assert not list(outside.iterdir())
    assert [turn.files_written for turn in outcome.turns if turn.files_written] == [("project:src/ok.txt",)]
    worktree_hooks = git(project, "rev-parse", "--git-common-dir").strip()
    assert not (project / worktree_hooks / "hooks" / "post-commit").exists()


def test_fs_read_text_file_reads_inside_the_worktree_only(project: Path, tmp_path: Path) -> None:
    GitRepo(project).write("notes.txt", "one\ntwo\nthree\n")
    GitRepo(project).commit_all("notes")
    (tmp_path / "secret.txt").write_text("secret\n", encoding="utf-8")
    steps = [
        {"fs_read": {"id": "lines", "path": "notes.txt", "line": 2, "limit": 1}},
        {"fs_read": {"id": "secret", "path": str(tmp_path / "secret.txt")}},
        {"fs_read": {"id": "dots", "path": "../secret.txt"}},
        {"fs_read": {"id": "missing", "path": "nope.txt"}},
        {"message": "read"},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    results = {call.call_id: call.result for turn in outcome.turns for call in turn.tool_calls}
    assert results["lines"] == "two\n"
    refused = failed_calls(outcome.turns)
    assert set(refused) == {"secret", "dots", "missing"}
    assert refused["missing"] == f"refused (-32002): no such file: {project_worktree(outcome)}/nope.txt"
    assert refused["dots"].startswith("refused (-32602): ")
    assert all("secret\n" not in (result or "") for result in results.values())


def test_permission_requests_allow_orchestras_tools_and_writes_inside_and_deny_the_rest_on_record(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        {
            "permission": {
                "id": "shell",
                "kind": "execute",
                "title": "rm -rf ~",
                "rawInput": {"command": "rm -rf ~"},
            }
        },
        {"permission": {"id": "edit-in", "kind": "edit", "title": "Edit a.py", "locations": ["a.py"]}},
        {
            "permission": {
                "id": "edit-out",
                "kind": "edit",
                "title": "Edit",
                "locations": [str(tmp_path / "x")],
            }
        },
        {"permission": {"id": "ours", "kind": "other", "title": "mcp__orchestra__project__read-file"}},
        {"message": "asked"},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    refused = failed_calls(outcome.turns)
    assert set(refused) == {"shell", "edit-out"}
    assert refused["shell"].startswith("denied by Orchestra's permission policy: a call of kind 'execute'")
    assert "outside the node's worktree" in refused["edit-out"]


def test_writes_past_orchestra_are_committed_apart_as_untracked(project: Path, tmp_path: Path) -> None:
    steps = [
        {"native_write": {"id": "w", "path": "rogue.txt", "content": "r\n"}},
        {"message": "wrote it myself"},
    ]
    outcome = run(project, tmp_path, {"steps": steps})
    assert outcome.result.succeeded, outcome.result.failure_reason
    untracked = [turn for turn in outcome.turns if turn.untracked]
    assert [turn.files_written for turn in untracked] == [("project:rogue.txt",)]
    assert "Orchestra-Untracked: true" in trailers(project, untracked[0].git_sha or "")


def test_report_outcome_plan_usage_and_cost_are_the_nodes(project: Path, tmp_path: Path) -> None:
    report = {
        "mcp": {"id": "r", "tool": "report_outcome", "arguments": {"status": "success", "notes": "all good"}}
    }
    steps = [
        {"plan": [{"content": "write a", "status": "in_progress"}]},
        write("c1", "a.py", "A = 1\n"),
        report,
        {"usage": {"amount": 0.25}},
        {"message": "finished"},
    ]
    usage = {"totalTokens": 150, "inputTokens": 100, "outputTokens": 50}
    outcome = run(project, tmp_path, {"steps": steps, "prompt_usage": usage})
    assert outcome.result.succeeded, outcome.result.failure_reason
    turns = outcome.turns
    assert any("The agent's plan:\n[in_progress] write a" in str(m.get("content")) for m in turns[0].messages)
    assert (turns[-1].token_usage.prompt_tokens, turns[-1].token_usage.completion_tokens) == (100, 50)
    assert sum(turn.cost_usd or 0 for turn in turns) == pytest.approx(0.25)
    assert [c.name for t in turns for c in t.tool_calls] == ["project:write-file", "report_outcome"]


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (
            {"steps": [{"message": "bye"}, {"crash": 3}]},
            "the ACP agent exited with status 3 before it answered",
        ),
        (
            {"steps": [{"garbage": "this is not JSON-RPC"}]},
            "sent a line that is not JSON: 'this is not JSON-RPC'",
        ),
        (
            {"steps": [{"garbage": '{"jsonrpc": "2.0", "method": "session/update", "params": {}}'}]},
            "a session/update of the wrong shape",
        ),
        ({"refuse_session": "log in first"}, "the ACP agent refused: log in first"),
        ({"protocol_version": 7}, "it speaks ACP protocol version 7; Orchestra speaks 1"),
        ({"stop_reason": "max_tokens"}, "it ran out of tokens (max_tokens)"),
    ],
    ids=["crash", "not-json", "bad-update", "refused", "protocol", "max-tokens"],
)
def test_each_way_the_agent_fails_ends_the_node_with_a_clear_reason_and_nothing_running(
    project: Path, tmp_path: Path, script: dict[str, Any], reason: str
) -> None:
    pids_file = tmp_path / "pids"
    script = {**script, "steps": [{"child": str(pids_file)}, *script.get("steps", [])]}
    outcome = run(project, tmp_path, script)
    pids = [int(pid) for pid in pids_file.read_text().split()] if pids_file.exists() else []
    try:
        assert not outcome.result.succeeded
        assert reason in (outcome.result.failure_reason or "")
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), (
            "the agent's group outlived the node"
        )
    finally:
        kill_quietly(pids, within=tmp_path)


@pytest.mark.parametrize(
    ("node_attrs", "timeout", "reason"),
    [
        (
            "",
            2.0,
            "the ACP agent did not finish within 2 s; it was stopped; its stderr ends: the stand-in is thinking hard",
        ),
        (
            ', timeout="2s"',
            None,
            "timed out after 2s; the attempt was cancelled",
        ),  # the engine cancels the node
    ],
    ids=["acp-timeout", "node-timeout"],
)
def test_a_time_limit_cancels_the_session_and_kills_the_agents_group(
    project: Path, tmp_path: Path, node_attrs: str, timeout: float | None, reason: str
) -> None:
    pids_file = tmp_path / "pids"
    script = {"steps": [{"child": str(pids_file)}, {"message": "thinking"}, {"hang": {}}]}
    started = time.monotonic()
    outcome = run(project, tmp_path, script, node_attrs=node_attrs, timeout=timeout)
    pids = [int(pid) for pid in pids_file.read_text().split()]
    try:
        assert not outcome.result.succeeded
        assert reason in (outcome.result.failure_reason or "")
        assert time.monotonic() - started < 20
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), (
            "the agent's group outlived the node"
        )
        assert [turn.messages[0]["content"] for turn in outcome.turns] == ["thinking"]
    finally:
        kill_quietly(pids, within=tmp_path)


def test_cancelling_the_node_sends_session_cancel_before_the_group_is_killed(
    project: Path, tmp_path: Path
) -> None:
    note = tmp_path / "cancel-note"
    script = {"steps": [{"message": "working"}, {"hang": {"honour_cancel": True, "note": str(note)}}]}
    outcome = run(project, tmp_path, script, node_attrs=', timeout="6s"')  # time to start, even under load
    assert not outcome.result.succeeded
    assert "timed out after 6s; the attempt was cancelled" in (outcome.result.failure_reason or "")
    assert note.read_text(encoding="utf-8") == "session/cancel came"


PROBE = """probe() {{ if sh -c "$2" 2>/dev/null; then echo "$1:ok"; else echo "$1:refused"; fi; }}
probe worktree 'echo inside > inside.txt'
probe outside 'touch {outside}/escaped.txt'
probe dotgit 'echo x >> .git/config'
probe scratch 'touch "$TMPDIR/scratch.txt"'
"""


@needs_bwrap()
def test_in_the_sandbox_the_agents_own_shell_writes_only_its_worktree(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    steps = [
        {"shell": {"id": "sh", "command": PROBE.format(outside=outside)}},
        write("w", "mcp.txt", "m\n"),
        {"message": "ok"},
    ]
    outcome = run(project, tmp_path, {"steps": steps}, sandbox=SandboxSettings(kind="bubblewrap"))
    assert outcome.result.succeeded, outcome.result.failure_reason
    [probe] = [call for turn in outcome.turns for call in turn.tool_calls if call.call_id == "sh"]
    assert [line for line in str(probe.result).splitlines() if ":" in line] == [
        "worktree:ok", "outside:refused", "dotgit:refused", "scratch:ok",
    ]  # fmt: skip
    assert not (outside / "escaped.txt").exists()
    written = [turn.files_written for turn in outcome.turns if turn.files_written]
    assert written == [("project:inside.txt",), ("project:mcp.txt",)]  # the shell's write committed apart
    assert [turn.untracked for turn in outcome.turns if turn.files_written] == [True, False]


def test_the_agents_running_cost_is_spread_over_its_turns_and_a_cost_budget_stops_it(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        {"usage": {"amount": 0.1}},
        write("c1", "a.py", "A = 1\n"),
        {"usage": {"amount": 0.3}},
        {"message": "more"},
        write("c2", "b.py", "B = 2\n"),
        {"message": "done"},
    ]
    spent = run(project, tmp_path, {"steps": steps})
    assert spent.result.succeeded, spent.result.failure_reason
    assert [turn.cost_usd for turn in spent.turns] == pytest.approx([0.1, 0.2, 0.0])

    stopped = run(project, tmp_path, {"steps": steps}, budget=BudgetSettings(max_cost_usd=0.05))  # type: ignore[arg-type]
    assert stopped.result.status == "budget_exceeded", stopped.result.failure_reason
    first, *after = stopped.turns
    assert (first.files_written, first.cost_usd) == (("project:a.py",), pytest.approx(0.1))
    # The agent runs ahead of the turns read: what it wrote through Orchestra before it was stopped is kept.
    assert all(turn.messages[0]["role"] == "system" for turn in after)


def test_an_agent_that_wants_authentication_gets_the_configured_method_or_a_hint(
    project: Path, tmp_path: Path
) -> None:
    script = {"auth_method": "agent-api-key", "steps": [{"message": "in"}]}
    refused = run(project, tmp_path, script)
    assert not refused.result.succeeded
    assert (
        "the ACP agent refused: Authentication required (JSON-RPC error -32000); set acp.auth_method in "
        "orchestra.yaml to one of its methods: agent-api-key"
    ) in (refused.result.failure_reason or "")
    assert run(project, tmp_path, script, auth_method="agent-api-key").result.succeeded


def test_the_agent_is_offered_the_file_system_no_terminal_and_orchestras_tool_server_in_the_worktree(
    project: Path, tmp_path: Path
) -> None:
    given = tmp_path / "given.json"
    outcome = run(project, tmp_path, {"steps": [{"record": str(given)}, {"message": "seen"}]})
    assert outcome.result.succeeded, outcome.result.failure_reason
    seen = json.loads(given.read_text(encoding="utf-8"))
    assert seen["capabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert seen["capabilities"]["terminal"] is False and seen["client"] == "orchestra"
    worktree = Path(seen["cwd"])
    assert worktree != project and git(worktree, "rev-parse", "--abbrev-ref", "HEAD").startswith("orchestra/")
    [server] = seen["mcp_servers"]
    assert server["name"] == "orchestra" and server["args"][:3] == ["-P", "-m", "orchestra_adapters.mcp"]
    assert [variable["name"] for variable in server["env"]] == ["ORCHESTRA_MCP_TOKEN"]
    assert "Build it" in seen["prompt"]
    assert {turn.model for turn in outcome.turns} == {"acp-stand-in"}


def test_a_budget_reached_by_a_turn_closed_while_answering_the_agent_stops_it_there(
    project: Path, tmp_path: Path
) -> None:
    steps = [
        {"usage": {"amount": 0.1}},
        {"fs_write": {"id": "w", "path": "a.py", "content": "A = 1\n", "bare": True}},
        {"message": "after"},
    ]
    stopped = run(project, tmp_path, {"steps": steps}, budget=BudgetSettings(max_cost_usd=0.05))  # type: ignore[arg-type]
    assert stopped.result.status == "budget_exceeded", stopped.result.failure_reason
    assert [turn.files_written for turn in stopped.turns] == [("project:a.py",)]
