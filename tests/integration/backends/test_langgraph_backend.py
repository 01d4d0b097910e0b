"""LangGraphBackend with the scripted model: real tools, per-turn writes, turn records and agent state."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.backends.turn_records import AgentStateRef
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall
from orchestra_core.ports.codergen_backend import CodergenBackend

THREE_TURNS = """\
nodes:
  implement:
    - content: "Let me look around first."
      tool_calls:
        - {name: "project:list-files"}
        - {name: "project:read-file", args: {path: README.md}}
    - content: "I'll add hello.py and its test."
      tool_calls:
        - {name: "project:write-file", args: {path: hello.py, content: "print('hello')\\n"}}
        - {name: "project:write-file", args: {path: tests/test_hello.py, content: "def test(): pass\\n"}}
    - content: "Done: hello.py prints a greeting."
"""

Backend = Callable[..., LangGraphBackend]


def run_context(session: str = "session-1", fidelity: str = "compact", **values: object) -> Context:
    """The context the engine prepares for a codergen node."""
    return Context({"internal.session_id": session, "internal.fidelity": fidelity, **values})


def test_conforms_to_the_codergen_backend_port(make_backend: Backend) -> None:
    assert isinstance(make_backend("default: hi\n"), CodergenBackend)


def test_three_turns_run_tools_track_writes_and_report_each_turn(
    make_backend: Backend, repo: RepoContext
) -> None:
    backend = make_backend(THREE_TURNS)
    turns: list[AgentTurn] = []
    refs_saved_before_callback: list[bool] = []

    def on_turn(turn: AgentTurn) -> None:
        refs_saved_before_callback.append(backend.agent_messages(turn.agent_state_ref or "") is not None)
        turns.append(turn)

    result = backend.run(Node("implement"), "Add a hello script.", run_context(), on_turn)

    assert result == "Done: hello.py prints a greeting."
    assert (repo.root / "hello.py").read_text() == "print('hello')\n"
    assert (repo.root / "tests" / "test_hello.py").exists()
    assert [t.turn_number for t in turns] == [0, 1, 2]
    assert {(t.node_id, t.model, t.provider) for t in turns} == {("implement", "scripted-sonnet", "scripted")}
    assert [t.files_written for t in turns] == [(), ("project:hello.py", "project:tests/test_hello.py"), ()]
    assert refs_saved_before_callback == [True, True, True]

    first, second, last = turns
    assert [m["role"] for m in first.messages] == ["user", "assistant", "tool", "tool"]
    assert first.messages[0]["content"] == "Add a hello script."
    assert first.messages[1]["tool_calls"][1]["name"] == "project:read-file"
    assert first.messages[3] == {
        "role": "tool",
        "content": "# Demo\n",
        "name": "project:read-file",
        "tool_call_id": first.tool_calls[1].call_id,
    }
    assert first.tool_calls[0] == ToolCall(
        "project:list-files", {}, first.tool_calls[0].call_id, result="README.md"
    )
    assert [c.name for c in second.tool_calls] == ["project:write-file", "project:write-file"]
    assert second.tool_calls[0].args == {"path": "hello.py", "content": "print('hello')\n"}
    assert second.tool_calls[0].result == "Wrote 15 characters to hello.py"
    assert [m["role"] for m in last.messages] == ["assistant"] and last.tool_calls == ()

    assert all(t.token_usage.prompt_tokens > 0 and t.token_usage.completion_tokens > 0 for t in turns)
    assert turns[2].token_usage.prompt_tokens > turns[0].token_usage.prompt_tokens  # the history grows
    assert all(t.duration_s > 0 for t in turns)
    usage = backend.usage.for_node("implement")
    assert (usage.model_calls, usage.turns) == (3, 3)
    assert usage.tokens == sum((t.token_usage for t in turns), TokenUsage())


def test_state_refs_name_one_thread_and_its_growing_checkpoints(make_backend: Backend) -> None:
    backend = make_backend(THREE_TURNS)
    turns: list[AgentTurn] = []
    backend.run(Node("implement"), "Add a hello script.", run_context(), turns.append)
    refs = [AgentStateRef.parse(t.agent_state_ref or "") for t in turns]
    assert len({ref.thread_id for ref in refs}) == 1 and refs[0].thread_id.startswith("session-1/implement/")
    assert len({ref.checkpoint_id for ref in refs}) == 3
    saved = [backend.agent_messages(t.agent_state_ref or "") for t in turns]
    assert [len(messages or []) for messages in saved] == [4, 7, 8]
    assert saved[2] is not None and saved[2][-1] == {
        "role": "assistant",
        "content": "Done: hello.py prints a greeting.",
    }
    assert backend.agent_messages(AgentStateRef(refs[0].thread_id, "no-such-checkpoint").render()) is None
    with pytest.raises(ValueError, match="not a LangGraph agent state reference"):
        backend.agent_messages("abc")


def test_state_survives_the_backend_in_the_sqlite_file(make_backend: Backend, tmp_path: Path) -> None:
    backend = make_backend(THREE_TURNS)
    turns: list[AgentTurn] = []
    backend.run(Node("implement"), "Add a hello script.", run_context(), turns.append)
    backend.close()
    assert (tmp_path / ".orchestra" / "agents.db").is_file()
    reopened = make_backend("default: x\n")
    assert len(reopened.agent_messages(turns[1].agent_state_ref or "") or []) == 7


def test_report_outcome_becomes_the_outcome_and_ends_the_stage(make_backend: Backend) -> None:
    backend = make_backend(
        """\
nodes:
  review:
    - content: "The tests fail."
      tool_calls:
        - name: report_outcome
          args: {status: fail, notes: "2 tests fail", preferred_label: Fix, suggested_next_ids: [implement],
                 context_updates: {review.verdict: rejected}}
    - "never played"
"""
    )
    turns: list[AgentTurn] = []
    outcome = backend.run(Node("review"), "Review it.", run_context(), turns.append)
    assert outcome == Outcome(
        StageStatus.FAIL,
        preferred_label="Fix",
        suggested_next_ids=("implement",),
        context_updates={"review.verdict": "rejected"},
        notes="2 tests fail",
        failure_reason="2 tests fail",
    )
    assert len(turns) == 1 and turns[0].tool_calls[0].name == "report_outcome"
    assert turns[0].tool_calls[0].result == "Outcome recorded: fail. The stage ends after this turn."


def test_success_report_without_notes_keeps_the_reply_as_notes(make_backend: Backend) -> None:
    backend = make_backend(
        "nodes:\n  gate:\n    - content: All good.\n      tool_calls: [{name: report_outcome, args: {status: success, preferred_label: Ship}}]\n"
    )
    outcome = backend.run(Node("gate"), "Decide.", run_context())
    assert outcome == Outcome(StageStatus.SUCCESS, preferred_label="Ship", notes="All good.")


def test_tool_errors_go_back_to_the_model_and_the_run_continues(
    make_backend: Backend, repo: RepoContext
) -> None:
    backend = make_backend(
        """\
nodes:
  implement:
    - tool_calls:
        - {name: "project:write-file", args: {path: ../escape.txt, content: x}}
        - {name: "project:read-file", args: {}}
        - {name: "project:read-file", args: {path: 3}}
        - {name: "project:explode"}
        - {name: "project:delete-everything"}
        - {name: report_outcome, args: {status: wonderful}}
    - "Recovered."
"""
    )
    turns: list[AgentTurn] = []
    assert backend.run(Node("implement"), "Go.", run_context(), turns.append) == "Recovered."
    errors = [call.error for call in turns[0].tool_calls]
    assert all(error is not None for error in errors)
    assert "contains '..'" in (errors[0] or "")
    assert "missing required argument(s): path" in (errors[1] or "")
    assert "argument 'path' must be" in (errors[2] or "")
    assert errors[3] == "RuntimeError: the tool itself crashed"
    assert "unknown tool 'project__delete-everything'" in (errors[4] or "")
    assert "wonderful" in (errors[5] or "")
    tool_messages = [m for m in turns[0].messages if m["role"] == "tool"]
    assert all(m["status"] == "error" and m["content"].startswith("Error: ") for m in tool_messages)
    assert turns[0].files_written == ()
    assert not (repo.root.parent / "escape.txt").exists()


def test_full_fidelity_reuses_the_thread_of_its_thread_key(make_backend: Backend) -> None:
    backend = make_backend("nodes:\n  plan: [Planned.]\n  implement: [Implemented.]\n  review: [Reviewed.]\n")
    refs: dict[str, str] = {}

    def remember(turn: AgentTurn) -> None:
        refs[turn.node_id] = turn.agent_state_ref or ""

    backend.run(
        Node("plan"), "Plan it.", run_context(fidelity="full", **{"internal.thread_key": "main"}), remember
    )
    backend.run(
        Node("implement"),
        "Build it.",
        run_context(fidelity="full", **{"internal.thread_key": "main"}),
        remember,
    )
    backend.run(Node("review"), "Review it.", run_context(fidelity="compact"), remember)

    plan, implement, review = (AgentStateRef.parse(refs[n]) for n in ("plan", "implement", "review"))
    assert plan.thread_id == implement.thread_id == "session-1/main"
    assert [m["content"] for m in backend.agent_messages(refs["implement"]) or []] == [
        "Plan it.",
        "Planned.",
        "Build it.",
        "Implemented.",
    ]
    assert review.thread_id != plan.thread_id
    assert [m["content"] for m in backend.agent_messages(refs["review"]) or []] == ["Review it.", "Reviewed."]


def test_other_fidelities_start_a_fresh_thread_every_time(make_backend: Backend) -> None:
    backend = make_backend("default: ok\n")
    refs: list[str] = []
    for fidelity in ("compact", "compact", "summary:high"):
        backend.run(
            Node("loop"),
            "Again.",
            run_context(fidelity=fidelity),
            lambda t: refs.append(t.agent_state_ref or ""),
        )
    threads = {AgentStateRef.parse(ref).thread_id for ref in refs}
    assert len(threads) == 3
    assert all(len(backend.agent_messages(ref) or []) == 2 for ref in refs)


def test_full_fidelity_threads_are_per_session(make_backend: Backend) -> None:
    backend = make_backend("default: ok\n")
    refs: list[str] = []
    for session in ("s-a", "s-b"):
        ctx = run_context(session=session, fidelity="full", **{"internal.thread_key": "main"})
        backend.run(Node("n"), "Hi.", ctx, lambda t: refs.append(t.agent_state_ref or ""))
    assert [AgentStateRef.parse(r).thread_id for r in refs] == ["s-a/main", "s-b/main"]


def test_turn_limit_ends_in_fail_with_a_clear_reason(make_backend: Backend) -> None:
    looping = "    - tool_calls: [{name: 'project:list-files'}]\n" * 5
    backend = make_backend(f"nodes:\n  busy:\n{looping}")
    turns: list[AgentTurn] = []
    node = Node("busy", {"agent.max_turns": "2"})
    outcome = backend.run(node, "Keep busy.", run_context(), turns.append)
    assert isinstance(outcome, Outcome) and outcome.status == StageStatus.FAIL
    assert outcome.failure_reason == "the agent used all 2 turns (agent.max_turns) without finishing"
    assert len(turns) == 2


def test_turn_limit_allows_a_final_answer_on_the_last_turn(make_backend: Backend) -> None:
    backend = make_backend(
        "nodes:\n  n:\n    - tool_calls: [{name: 'project:list-files'}]\n    - Finished.\n"
    )
    assert backend.run(Node("n", {"agent.max_turns": "2"}), "Go.", run_context()) == "Finished."


def test_invalid_turn_limit_fails_the_node(make_backend: Backend) -> None:
    outcome = make_backend("default: x\n").run(Node("n", {"agent.max_turns": "0"}), "Go.", run_context())
    assert isinstance(outcome, Outcome) and "agent.max_turns must be at least 1" in outcome.failure_reason


@pytest.mark.parametrize(
    ("entry", "status", "reason"),
    [
        (
            "{error: 'rate limit exceeded', status_code: 429}",
            StageStatus.RETRY,
            "(HTTP 429): rate limit exceeded",
        ),
        ("{error: 'overloaded', status_code: 529}", StageStatus.RETRY, "(HTTP 529): overloaded"),
        ("{error: 'invalid x-api-key', status_code: 401}", StageStatus.FAIL, "(HTTP 401): invalid x-api-key"),
    ],
)
def test_provider_errors_become_outcomes_after_the_turns_so_far(
    make_backend: Backend, entry: str, status: StageStatus, reason: str
) -> None:
    backend = make_backend(
        f"nodes:\n  n:\n    - tool_calls: [{{name: 'project:list-files'}}]\n    - {entry}\n"
    )
    turns: list[AgentTurn] = []
    outcome = backend.run(Node("n"), "Go.", run_context(), turns.append)
    assert isinstance(outcome, Outcome) and outcome.status == status
    assert outcome.failure_reason == f"scripted model scripted-sonnet failed {reason}"
    assert len(turns) == 1  # the turn before the failure was reported


def test_an_exhausted_cassette_fails_the_node_naming_it(make_backend: Backend) -> None:
    backend = make_backend("nodes:\n  n: [only one]\n")
    backend.run(Node("n"), "Go.", run_context())
    outcome = backend.run(Node("n"), "Go again.", run_context())
    assert isinstance(outcome, Outcome) and outcome.status == StageStatus.FAIL
    assert "cassette.yaml: nodes.n: no reply left for call 2" in outcome.failure_reason


def test_an_on_turn_failure_is_not_swallowed(make_backend: Backend) -> None:
    backend = make_backend(THREE_TURNS)

    def broken(turn: AgentTurn) -> None:
        raise OSError("disk full while committing")

    with pytest.raises(OSError, match="disk full"):
        backend.run(Node("implement"), "Go.", run_context(), broken)


def test_parallel_nodes_share_the_backend_safely(make_backend: Backend) -> None:
    from concurrent.futures import ThreadPoolExecutor

    backend = make_backend(
        "nodes:\n"
        + "".join(
            f"  n{i}:\n    - tool_calls: [{{name: 'project:list-files'}}]\n    - done {i}\n" for i in range(4)
        )
    )
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: backend.run(Node(f"n{i}"), "Go.", run_context()), range(4)))
    assert results == [f"done {i}" for i in range(4)]
    assert all(backend.usage.for_node(f"n{i}").turns == 2 for i in range(4))


def test_tool_hooks_veto_calls_and_see_results(
    make_backend: Backend, repo: RepoContext, tmp_path: Path
) -> None:
    from orchestra_adapters.process.command_runner import SubprocessCommandRunner
    from orchestra_core.agents.hooks import HookResult, ToolHooks

    audit = tmp_path / "post.jsonl"
    pre = 'if [ "$ORCHESTRA_TOOL_NAME" = project:write-file ]; then echo "writes are frozen" >&2; exit 3; fi'
    post = f"cat >> {audit}; echo >> {audit}"
    results: list[HookResult] = []

    def hooks_for(node: Node, context: Context) -> ToolHooks:
        return ToolHooks(
            SubprocessCommandRunner(),
            pre=pre,
            post=post,
            cwd=str(tmp_path),
            node_id=node.id,
            on_result=results.append,
        )

    backend = make_backend(
        "nodes:\n  n:\n    - tool_calls:\n"
        "        - {name: 'project:write-file', args: {path: a.txt, content: x}}\n"
        "        - {name: 'project:read-file', args: {path: README.md}}\n"
        "    - Blocked, as expected.\n",
        tool_hooks=hooks_for,
    )
    turns: list[AgentTurn] = []
    assert backend.run(Node("n"), "Go.", run_context(), turns.append) == "Blocked, as expected."
    write, read = turns[0].tool_calls
    assert (
        write.error
        == "the call to project:write-file was blocked by the tool_hooks.pre hook: writes are frozen"
    )
    assert not (repo.root / "a.txt").exists() and turns[0].files_written == ()
    assert read.result == "# Demo\n"
    assert [(r.phase, r.tool, r.exit_code) for r in results] == [
        ("pre", "project:write-file", 3),
        ("pre", "project:read-file", 0),
        ("post", "project:read-file", 0),
    ]
    assert '"result": "# Demo\\n"' in audit.read_text()


def test_runs_the_agent_tool_registry_builtins(write_cassette, repo: RepoContext, tmp_path: Path) -> None:
    from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
    from orchestra_core.agents.toolset import build_tools, create_registry

    from .conftest import StaticResolver

    settings = write_cassette(
        """\
nodes:
  implement:
    - tool_calls:
        - {name: "project:write-file", args: {path: src/app.py, content: "x = 1\\n"}}
    - tool_calls:
        - {name: "project:edit-file", args: {path: src/app.py, old_text: "x = 1", new_text: "x = 2"}}
        - {name: "project:read-file", args: {path: ../outside.txt}}
    - Edited.
"""
    )
    registry = create_registry(settings)

    class RegistryToolset:
        def tools_for(self, node, agent, context, tracker):  # type: ignore[no-untyped-def]
            names = ["project:write-file", "project:edit-file", "project:read-file"]
            return build_tools(registry, names, {"project": repo}, tracker)

    backend = LangGraphBackend(
        LangChainChatModelFactory(settings, environ={}),
        StaticResolver(),
        RegistryToolset(),
        tmp_path / "agents.db",
    )
    turns: list[AgentTurn] = []
    assert backend.run(Node("implement"), "Go.", run_context(), turns.append) == "Edited."
    backend.close()
    assert (repo.root / "src" / "app.py").read_text() == "x = 2\n"
    assert [t.files_written for t in turns] == [("project:src/app.py",), ("project:src/app.py",), ()]
    edit, escape = turns[1].tool_calls
    assert edit.error is None, edit.error
    assert escape.error is not None and "'..'" in escape.error


def test_parallel_nodes_on_one_full_thread_take_turns(make_backend: Backend) -> None:
    from concurrent.futures import ThreadPoolExecutor

    backend = make_backend(
        "nodes:\n"
        + "".join(
            f"  r{i}:\n    - tool_calls: [{{name: 'project:list-files'}}]\n    - review {i}\n"
            for i in range(3)
        )
    )
    ctx = {"internal.thread_key": "fan_out"}
    refs: list[str] = []

    def review(i: int) -> object:
        return backend.run(
            Node(f"r{i}"),
            f"Review {i}.",
            run_context(fidelity="full", **ctx),
            lambda t: refs.append(t.agent_state_ref or ""),
        )

    with ThreadPoolExecutor(3) as pool:
        assert sorted(pool.map(review, range(3))) == ["review 0", "review 1", "review 2"]
    latest = max((backend.agent_messages(ref) or [] for ref in refs), key=len)
    prompts = [m["content"] for m in latest if m["role"] == "user"]
    assert sorted(prompts) == ["Review 0.", "Review 1.", "Review 2."]  # nobody's conversation was lost
    assert len(latest) == 3 * 4


def test_the_agents_text_and_tool_calls_are_told_as_they_happen_before_each_turn_ends(make_backend: Backend) -> None:
    from orchestra_core.model.activity import Activity

    heard: list[tuple[str, ...]] = []

    def on_activity(activity: Activity) -> None:
        if heard and activity.kind == "text" and heard[-1][0] == "text":  # the reply streams in chunks
            kind, turn, tool, text, error = heard.pop()
            heard.append((kind, turn, tool, text + activity.text, error))
            return
        heard.append((activity.kind, str(activity.turn), activity.tool, activity.text[:60], str(activity.error)))

    def on_turn(turn: AgentTurn) -> None:
        heard.append(("turn", str(turn.turn_number)))

    backend = make_backend(THREE_TURNS)
    backend.run(Node("implement"), "Add a hello script.", run_context(), on_turn, on_activity=on_activity)

    write = json.dumps({"path": "hello.py", "content": "print('hello')\n"})
    test_write = json.dumps({"path": "tests/test_hello.py", "content": "def test(): pass\n"})[:60]
    assert heard == [
        ("text", "0", "", "Let me look around first.", "False"),
        ("tool_call", "0", "project:list-files", "{}", "False"),
        ("tool_result", "0", "project:list-files", "README.md", "False"),
        ("tool_call", "0", "project:read-file", '{"path": "README.md"}', "False"),
        ("tool_result", "0", "project:read-file", "# Demo\n", "False"),
        ("turn", "0"),
        ("text", "1", "", "I'll add hello.py and its test.", "False"),
        ("tool_call", "1", "project:write-file", write, "False"),
        ("tool_result", "1", "project:write-file", "Wrote 15 characters to hello.py", "False"),
        ("tool_call", "1", "project:write-file", test_write, "False"),
        ("tool_result", "1", "project:write-file", "Wrote 17 characters to tests/test_hello.py", "False"),
        ("turn", "1"),
        ("text", "2", "", "Done: hello.py prints a greeting.", "False"),
        ("turn", "2"),
    ]
