"""Tool (4.10) and stack.manager_loop (4.11) handlers, with fakes (real processes: tests/integration/engine)."""

from __future__ import annotations

import threading
import time
from typing import Any

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.events import StageCompleted
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.command_runner import CommandCall, ScriptedCommandRunner
from tests.support.engine import Harness, graph


def tool_graph(attrs: str) -> Graph:
    return graph(
        f"""
        digraph p {{
            graph [goal="check things"]
            start [shape=Mdiamond]; done [shape=Msquare]
            check [shape=parallelogram, {attrs}]
            start -> check -> done
        }}
        """
    )


def test_tool_runs_the_command_with_the_stage_environment() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(0, "all good\n", "", 0.1))
    harness = Harness(command_runner=runner)
    result = harness.run(tool_graph('tool_command="make test", prompt="Test $goal", timeout="90s"'), session_id="s-1")
    assert result.status is RunStatus.SUCCESS
    call = runner.calls[0]
    assert (call.command, call.cwd, call.timeout) == ("make test", ".", 90.0)
    assert call.env == {
        "ORCHESTRA_LOGS_ROOT": "/runs/test",
        "ORCHESTRA_STAGE_DIR": "/runs/test/check",
        "ORCHESTRA_NODE_ID": "check",
        "ORCHESTRA_PROMPT_FILE": "/runs/test/check/prompt.txt",
        "ORCHESTRA_SESSION_ID": "s-1",
        "ORCHESTRA_ATTEMPT": "1",
        "ATTRACTOR_LOGS_ROOT": "/runs/test",
        "ATTRACTOR_STAGE_DIR": "/runs/test/check",
        "ATTRACTOR_NODE_ID": "check",
        "ATTRACTOR_PROMPT_FILE": "/runs/test/check/prompt.txt",
    }
    files = harness.directory().stage_files("check")
    assert files["prompt.txt"] == "Test check things"
    assert files["tool_output.txt"].startswith("$ make test\n# exit code 0")
    assert "all good" in files["tool_output.txt"]
    assert result.context["tool.output"] == "all good" and result.context["tool.exit_code"] == 0


def test_context_values_are_never_put_into_the_command() -> None:
    runner = ScriptedCommandRunner()
    backend = ScriptedCodergenBackend({"a": Outcome(StageStatus.SUCCESS, context_updates={"name": "x; rm -rf /"})})
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            a; check [shape=parallelogram, tool_command="echo $name ${context.name}"]
            start -> a -> check -> done
        }
        """
    )
    Harness(command_runner=runner, backend=backend).run(pipeline)
    assert runner.calls[0].command == "echo $name ${context.name}"


def test_non_zero_exit_fails_with_the_code_and_the_stderr_tail() -> None:
    stderr = "".join(f"line {i}\n" for i in range(1000)) + "FATAL: tests failed\n"
    runner = ScriptedCommandRunner(default=CommandResult(3, "", stderr, 1.0))
    result = Harness(command_runner=runner).run(tool_graph('tool_command="pytest"'))
    reason = result.node_outcomes["check"].failure_reason
    assert reason.startswith("exit code 3: [... ") and reason.endswith("FATAL: tests failed")
    assert len(reason) < 2100
    assert result.context["tool.exit_code"] == 3


def test_timeouts_fail_and_say_so() -> None:
    runner = ScriptedCommandRunner(default=CommandResult(None, "partial", "", 2.0, timed_out=True))
    result = Harness(command_runner=runner).run(tool_graph('tool_command="sleep 100", timeout="2s"'))
    assert result.node_outcomes["check"].failure_reason == "timed out after 2s; the command's processes were killed"


def test_tool_workdir_and_missing_command() -> None:
    runner = ScriptedCommandRunner()
    harness = Harness(command_runner=runner)
    harness.run(tool_graph('tool_command="ls", tool_workdir="sub/dir"'))
    assert runner.calls[0].cwd == "./sub/dir"
    assert Harness(command_runner=runner).run(tool_graph("")).node_outcomes["check"].failure_reason == "No tool_command specified"
    assert "no command runner" in Harness().run(tool_graph('tool_command="ls"')).node_outcomes["check"].failure_reason


def test_a_tool_may_report_its_outcome_through_status_json() -> None:
    def writes_status(call: CommandCall) -> CommandResult:
        return CommandResult(0, "", "", 0.0)

    class StatusWriter(ScriptedCommandRunner):
        def __init__(self, harness_holder: dict[str, Any]) -> None:
            super().__init__(default=writes_status)
            self.holder = harness_holder

        def run(self, command: str, **kwargs: Any) -> CommandResult:
            self.holder["dir"].write_stage_file("check", "status.json", '{"outcome": "fail", "notes": "3 tests failed"}')
            return super().run(command, **kwargs)

    holder: dict[str, Any] = {}
    harness = Harness(command_runner=StatusWriter(holder))
    holder["dir"] = harness.dirs.open("/runs/test")
    result = harness.run(tool_graph('tool_command="./check.sh"'))
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["check"].notes == "3 tests failed"
    assert result.context["tool.exit_code"] == 0


# manager loop

CHILD = graph(
    """
    digraph child {
        start [shape=Mdiamond]; done [shape=Msquare]
        step1; step2
        start -> step1 -> step2 -> done
    }
    """,
    path="/pipelines/child.dot",
)


def manager_graph(attrs: str = "", dotfile: str = "child.dot") -> Graph:
    return graph(
        f"""
        digraph parent {{
            graph [stack.child_dotfile="{dotfile}"]
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, manager.poll_interval="10ms", {attrs}]
            start -> boss -> done
        }}
        """,
        path="/pipelines/parent.dot",
    )


class Loader:
    def __init__(self, child: Graph = CHILD) -> None:
        self.child = child
        self.paths: list[str] = []

    def __call__(self, path: str) -> Graph:
        self.paths.append(path)
        return self.child


def test_manager_runs_the_child_and_succeeds_when_it_does() -> None:
    loader = Loader()
    harness = Harness(pipeline_loader=loader)
    result = harness.run(manager_graph())
    assert result.status is RunStatus.SUCCESS, result.failure_reason
    assert loader.paths == ["/pipelines/child.dot"]
    assert result.context["stack.child.status"] == "completed"
    assert result.context["stack.child.completed_nodes"] == ["start", "step1", "step2", "done"]
    child_dir = harness.directory("/runs/test/boss/child")
    assert child_dir.checkpoints[-1].status is RunStatus.SUCCESS
    child_events = [e for e in harness.log.of(StageCompleted) if e.branch == "boss.child"]
    assert [e.node_id for e in child_events] == ["start", "step1", "step2", "done"]


def test_manager_fails_when_the_child_fails() -> None:
    harness = Harness(backend=ScriptedCodergenBackend({"step2": "fail"}), pipeline_loader=Loader())
    result = harness.run(manager_graph())
    assert result.status is RunStatus.FAIL
    assert result.node_outcomes["boss"].failure_reason.startswith("Child failed: stage step2 failed")


class Hold:
    """A child stage that blocks until released or until its run is being stopped."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        self.entered.set()
        deadline = time.monotonic() + 5
        while not (self.release.is_set() or stage.engine.stop.is_set()) and time.monotonic() < deadline:
            time.sleep(0.002)
        return Outcome.success(context_updates={"held_value": context.get("stack.steer.hint", "")})


HELD_CHILD = graph(
    """
    digraph child {
        start [shape=Mdiamond]; done [shape=Msquare]
        step1; wait_here [type="hold"]; step3
        start -> step1 -> wait_here -> step3 -> done
    }
    """
)


def test_stop_condition_ends_supervision_and_stops_the_child() -> None:
    hold = Hold()  # released only by the manager stopping the child
    harness = Harness(handlers={"hold": hold}, pipeline_loader=Loader(HELD_CHILD))
    result = harness.run(manager_graph('manager.stop_condition="stack.child.last_stage=step1"'))
    assert result.status is RunStatus.SUCCESS
    assert result.node_outcomes["boss"].notes == "Stop condition satisfied"
    child = harness.directory("/runs/test/boss/child").checkpoints[-1]
    assert "step3" not in child.completed_nodes


def test_max_cycles_fails_and_stops_the_child() -> None:
    hold = Hold()
    harness = Harness(handlers={"hold": hold}, pipeline_loader=Loader(HELD_CHILD))
    result = harness.run(manager_graph('manager.max_cycles=2, manager.actions="observe"'))
    assert result.status is RunStatus.FAIL
    reason = result.node_outcomes["boss"].failure_reason
    assert reason == "manager loop exceeded manager.max_cycles=2: child still running after 2 cycles"


def steered(actions: str) -> str:
    hold = Hold()
    harness = Harness(handlers={"hold": hold}, pipeline_loader=Loader(HELD_CHILD))
    releaser = threading.Thread(target=lambda: (hold.entered.wait(5), hold.release.set()))
    releaser.start()
    result = harness.run(manager_graph(f'manager.actions="{actions}"'), initial_context={"stack.steer.hint": "use caching"})
    releaser.join()
    assert result.status is RunStatus.SUCCESS
    return harness.directory("/runs/test/boss/child").checkpoints[-1].context["held_value"]


def test_steering_writes_into_the_child_context() -> None:
    assert steered("observe,steer,wait") == "use caching"
    assert steered("observe,wait") == ""


def test_manager_configuration_errors() -> None:
    no_child = graph('digraph p { start [shape=Mdiamond]; boss [shape=house]; start -> boss }')
    reason = Harness().run(no_child).node_outcomes["boss"].failure_reason
    assert "stack.child_dotfile" in reason and "nothing to stop on" in reason
    off = Harness(pipeline_loader=Loader()).run(manager_graph("stack.child_autostart=false"))
    assert "stack.child_autostart=false" in off.node_outcomes["boss"].failure_reason
    bad = Harness(pipeline_loader=Loader()).run(manager_graph('manager.stop_condition="a=="'))
    assert "'==' is not an operator" in bad.node_outcomes["boss"].failure_reason
