"""Node attributes other Attractor runners honour: max_visits (main line, branches, resume), goal-gate failures,
auto_status and tool_hooks on tool nodes."""

from __future__ import annotations

import json

import pytest

from orchestra_core.graph import Graph, Node
from orchestra_core.graph.visits import DEFAULT_MAX_VISITS, visit_bound
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.command_runner import ScriptedCommandRunner
from orchestra_core.testing.run_directory import InMemoryRunDirectories
from tests.support.engine import Harness, graph

# `work` loops back to itself until the context says stop; it may run three times.
LOOP = """
digraph loop {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [max_visits=3]
    start -> work
    work -> done [condition="context.stop=yes"]
    work -> work
}
"""


def test_a_visit_bound_refuses_the_visit_after_it_and_zero_lifts_it() -> None:
    bare = Graph("g")
    bound = visit_bound(Node("work", {"max_visits": "2"}), bare)
    assert bound.refusal(1) is None
    assert bound.refusal(2) == (
        "node work exceeded max_visits=2: it already ran 2 times and a loop led back to it; to allow more, raise "
        "max_visits=N on work (max_visits=0 lifts its bound)"
    )
    assert visit_bound(Node("work"), bare).refusal(DEFAULT_MAX_VISITS - 1) is None
    assert visit_bound(Node("work"), bare).refusal(DEFAULT_MAX_VISITS) is not None
    assert visit_bound(Node("work", {"max_visits": "0"}), bare).refusal(10 * DEFAULT_MAX_VISITS) is None
    assert visit_bound(Node("work", {"max_visits": "-1"}), bare).refusal(10 * DEFAULT_MAX_VISITS) is None
    with pytest.raises(OrchestraError, match="max_visits"):
        visit_bound(Node("work", {"max_visits": "often"}), bare)


def test_a_loop_stops_when_it_would_visit_a_node_one_time_more_than_max_visits() -> None:
    backend = ScriptedCodergenBackend({"work": "success"})
    harness = Harness(backend=backend)
    result = harness.run(graph(LOOP))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith("node work exceeded max_visits=3")
    assert backend.visits("work") == 3
    last = harness.checkpoints()[-1]
    assert (last.status, last.failure_reason) == (RunStatus.FAIL, result.failure_reason)


def test_a_loop_that_leaves_on_its_last_allowed_visit_succeeds() -> None:
    stop = Outcome.success(context_updates={"stop": "yes"})
    backend = ScriptedCodergenBackend({"work": ["success", "success", stop]})
    result = Harness(backend=backend).run(graph(LOOP))
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert result.completed_nodes == ("start", "work", "work", "work", "done")


def test_visits_before_a_resume_count() -> None:
    dirs = InMemoryRunDirectories()
    first = Harness(backend=ScriptedCodergenBackend({"work": "success"}), run_directory=dirs, max_node_visits=3)
    stopped = first.engine.run(graph(LOOP), session_id="s", logs_root="/r")
    assert "max_node_visits" in stopped.failure_reason  # the global limit stopped it after start, work, work
    checkpoint = dirs.opened["/r"].load_checkpoint()
    assert checkpoint is not None and checkpoint.completed_nodes == ("start", "work", "work")

    backend = ScriptedCodergenBackend({"work": "success"})
    resumed = Harness(backend=backend, run_directory=dirs)
    result = resumed.engine.run(graph(LOOP), session_id="s", logs_root="/r", resume_from=checkpoint)
    assert result.failure_reason.startswith("node work exceeded max_visits=3: it already ran 3 times")
    assert backend.visits("work") == 1


BRANCHED = """
digraph branched {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; join [shape=tripleoctagon]
    quick; spin [max_visits=2]
    start -> fan
    fan -> quick -> join
    fan -> spin
    spin -> join [condition="context.stop=yes"]
    spin -> spin
    join -> done
}
"""


def test_max_visits_holds_inside_a_parallel_branch() -> None:
    backend = ScriptedCodergenBackend({"spin": "success", "quick": "success"})
    harness = Harness(backend=backend)
    result = harness.run(graph(BRANCHED))
    assert backend.visits("spin") == 2
    records = {record["id"]: record for record in result.context["parallel.results"]}
    assert records["spin"]["status"] == "fail"
    assert result.context["parallel.branch.spin.status"] == "fail"


GATED = """
digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [goal_gate=true]
    start -> check -> done
}
"""


def test_a_failed_goal_gate_without_a_failure_route_says_goal_gate_and_names_the_node() -> None:
    result = Harness(backend=ScriptedCodergenBackend({"check": "fail"})).run(graph(GATED))
    assert result.status is RunStatus.FAIL
    assert result.failure_reason.startswith("goal gate check is unsatisfied (fail")
    assert result.failure_reason.endswith("and has no retry target")


def test_a_partially_successful_goal_gate_satisfies_it() -> None:
    result = Harness(backend=ScriptedCodergenBackend({"check": "partial_success"})).run(graph(GATED))
    assert result.status is RunStatus.SUCCESS
    assert result.node_outcomes["check"].status.value == "partial_success"


# --- tool nodes: auto_status and tool_hooks, with a scripted command runner ---------------------------------


def tool_graph(attrs: str) -> Graph:
    return graph(
        f"""
        digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            check [shape=parallelogram, tool_command="make test", {attrs}]
            start -> check -> done
        }}
        """
    )


def test_auto_status_makes_a_failing_command_a_success_and_writes_no_status_file() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(2, "", "boom", 0.1))
    harness = Harness(command_runner=runner)
    result = harness.run(tool_graph("auto_status=true"))
    assert result.status is RunStatus.SUCCESS
    check = result.node_outcomes["check"]
    assert (check.status, check.notes) == (StageStatus.SUCCESS, "auto_status synthesized success (exit code 2)")
    assert result.context["tool.exit_code"] == 2
    assert "status.json" not in harness.directory().stage_files("check")


def test_auto_status_does_not_excuse_a_killed_command() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(None, "", "", 1.0, timed_out=True))
    result = Harness(command_runner=runner).run(tool_graph('auto_status=true, timeout="1s"'))
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["check"].failure_reason.startswith("timed out after 1s")


def test_tool_hooks_get_the_tool_environment_and_the_hook_variables() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(0, "ok\n", "", 0.1))
    harness = Harness(command_runner=runner)
    result = harness.run(tool_graph('tool_hooks.pre="pre-hook", tool_hooks.post="post-hook"'), session_id="s-1")
    assert result.status is RunStatus.SUCCESS
    pre, command, post = runner.calls
    assert [call.command for call in runner.calls] == ["pre-hook", "make test", "post-hook"]
    for hook in (pre, post):
        assert hook.cwd == command.cwd and hook.writable == ("/runs/test/check",)
        assert {key: hook.env[key] for key in ("TOOL_NAME", "NODE_ID", "ATTRACTOR_STAGE_DIR", "ATTRACTOR_LOGS_ROOT")} == {
            "TOOL_NAME": "shell", "NODE_ID": "check", "ATTRACTOR_STAGE_DIR": "/runs/test/check",
            "ATTRACTOR_LOGS_ROOT": "/runs/test",
        }
        assert hook.env["ORCHESTRA_SESSION_ID"] == "s-1"  # the tool's own variables come along
    assert "EXIT_CODE" not in pre.env and (post.env["EXIT_CODE"], post.env["ORCHESTRA_EXIT_CODE"]) == ("0", "0")
    assert json.loads(post.stdin or "") == {
        "phase": "post", "node_id": "check", "tool": "shell", "arguments": {"command": "make test"}, "exit_code": 0,
    }


def test_a_failing_pre_hook_keeps_the_command_from_running() -> None:
    runner = ScriptedCommandRunner({"pre-hook": CommandResult(9, "", "frozen\n", 0.1)})
    result = Harness(command_runner=runner).run(tool_graph('tool_hooks.pre="pre-hook", tool_hooks.post="post-hook"'))
    assert [call.command for call in runner.calls] == ["pre-hook"]
    assert result.node_outcomes["check"].failure_reason == (
        "the tool_hooks.pre hook failed (exit code 9: frozen); the command did not run"
    )


def test_the_graph_hooks_apply_to_tool_nodes_that_set_none() -> None:
    runner = ScriptedCommandRunner()
    pipeline = tool_graph("").evolve(attrs={"tool_hooks.pre": "graph-pre"})
    Harness(command_runner=runner).run(pipeline)
    assert [call.command for call in runner.calls] == ["graph-pre", "make test"]
