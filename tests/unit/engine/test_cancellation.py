"""Cancellation of a timed-out attempt, and programming errors that are not retried.

- A Cancellation runs its callbacks once when cancelled (at once when registered late), can be unregistered,
  and raises StageCancelled on `raise_if_cancelled`.
- The subprocess command runner kills the command's whole process group when the cancellation it was given
  (or the thread's current one) is cancelled, and starts nothing once it is; a command that would write a
  file later never does.
- The engine cancels a timed-out attempt and waits for it to end before the retry starts; an attempt that
  does not stop in time fails the node without a retry.
- A handler's AttributeError, TypeError, ... ends the run at once (StageCrashed), after one attempt, with the
  traceback in the stage's `traceback.txt`; other exceptions are still retried.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_core.engine import execution
from orchestra_core.engine.execution import StageCrashed
from orchestra_core.engine.retry import is_programming_error, is_retryable
from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.model.cancellation import Cancellation, StageCancelled, cancellation_scope
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.events import StageRetrying
from orchestra_core.model.outcome import Outcome
from tests.support.engine import Harness, graph


def test_callbacks_run_once_on_cancel_at_once_when_late_and_not_once_unregistered() -> None:
    cancel = Cancellation()
    calls: list[str] = []
    cancel.on_cancel(lambda: calls.append("a"))
    forget = cancel.on_cancel(lambda: calls.append("gone"))
    forget()
    cancel.raise_if_cancelled()
    cancel.cancel("node x timed out after 1s")
    cancel.cancel("again")
    assert calls == ["a"] and cancel.is_set() and cancel.reason == "node x timed out after 1s"
    cancel.on_cancel(lambda: calls.append("late"))
    assert calls == ["a", "late"]
    with pytest.raises(StageCancelled, match="node x timed out"):
        cancel.raise_if_cancelled()
    assert not is_retryable(StageCancelled("x"))


def _later(seconds: float, action: object) -> None:
    timer = threading.Timer(seconds, action)  # type: ignore[arg-type]
    timer.daemon = True
    timer.start()


def test_a_cancelled_command_is_killed_with_its_group_and_never_writes(tmp_path: Path) -> None:
    late = tmp_path / "late"
    cancel = Cancellation()
    _later(0.3, lambda: cancel.cancel("node x timed out after 300ms"))
    started = time.monotonic()
    result = SubprocessCommandRunner().run(f"(sleep 2; echo late > {late}) & sleep 2", cwd=str(tmp_path), cancel=cancel)
    assert time.monotonic() - started < 1.9  # uncancelled, it takes 2 s
    assert result.cancelled and not result.ok and result.exit_code is None and not result.timed_out
    time.sleep(2.5)
    assert not late.exists()


def test_the_current_cancellation_reaches_a_runner_given_none(tmp_path: Path) -> None:
    cancel = Cancellation()
    with cancellation_scope(cancel):
        _later(0.2, cancel.cancel)
        result = SubprocessCommandRunner().run("sleep 5", cwd=str(tmp_path))
        assert result.cancelled
        again = SubprocessCommandRunner().run(f"touch {tmp_path / 'started'}", cwd=str(tmp_path))
    assert again.cancelled and "not started" in again.stderr and not (tmp_path / "started").exists()
    assert SubprocessCommandRunner().run("true", cwd=str(tmp_path)).ok  # outside the scope: no cancellation


class Overruns:
    """Overruns its timeout; records when each attempt starts and ends; stops on cancel unless `stubborn`."""

    enforces_timeout = False

    def __init__(self, stubborn: bool = False) -> None:
        self.stubborn = stubborn
        self.spans: list[tuple[float, float]] = []
        self.release = threading.Event()

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        started = time.monotonic()
        try:
            if self.stubborn:
                self.release.wait(5)
            else:
                stage.cancel.wait(5)
                stage.cancel.raise_if_cancelled()
            return Outcome.success()
        finally:
            self.spans.append((started, time.monotonic()))


TIMED = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        slow [type="slow", timeout="50ms", max_retries=2, retry_initial_delay="1ms"]
        start -> slow -> done
    }
    """
)


def test_each_timed_out_attempt_has_ended_before_the_next_starts() -> None:
    handler = Overruns()
    harness = Harness(handlers={"slow": handler})
    result = harness.run(TIMED)
    assert "timed out after 50ms; the attempt was cancelled" in (result.node_outcomes["slow"].failure_reason or "")
    assert len(handler.spans) == 3
    for (_, ended), (next_started, _) in zip(handler.spans, handler.spans[1:], strict=False):
        assert ended <= next_started


def test_an_attempt_that_does_not_stop_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "CANCEL_WAIT_S", 0.05)
    handler = Overruns(stubborn=True)
    harness = Harness(handlers={"slow": handler})
    try:
        result = harness.run(TIMED)
    finally:
        handler.release.set()
    reason = result.node_outcomes["slow"].failure_reason or ""
    assert "did not stop" in reason and "not retried" in reason
    assert harness.log.of(StageRetrying) == []


class Raises:
    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.calls = 0

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        self.calls += 1
        raise self.error


BUGGY = graph(
    """
    digraph p {
        start [shape=Mdiamond]; done [shape=Msquare]
        boom [type="raises", max_retries=3, retry_initial_delay="1ms"]
        start -> boom -> done
    }
    """
)


@pytest.mark.parametrize(
    "error",
    [AttributeError("'NoneType' has no attribute 'x'"), TypeError("f() takes 1"), NameError("y"), KeyError("k")],
)
def test_a_programming_error_ends_the_run_after_one_attempt_with_its_traceback(error: Exception) -> None:
    handler = Raises(error)
    harness = Harness(handlers={"raises": handler})
    with pytest.raises(StageCrashed, match=f"node boom: .*{type(error).__name__}.*not retried; traceback in"):
        harness.run(BUGGY)
    assert handler.calls == 1
    text = harness.directory().read_stage_file("boom", "traceback.txt")
    assert text is not None and text.startswith("Traceback") and type(error).__name__ in text


@pytest.mark.parametrize("error", [RuntimeError("flaky"), OSError("connection reset")])
def test_other_exceptions_are_still_retried(error: Exception) -> None:
    handler = Raises(error)
    result = Harness(handlers={"raises": handler}).run(BUGGY)
    assert handler.calls == 4 and result.node_outcomes["boom"].failure_reason


def test_what_counts_as_a_programming_error() -> None:
    assert is_programming_error(AttributeError()) and not is_retryable(AttributeError())
    assert not is_programming_error(OrchestraError("bad input"))
    flagged = TypeError("a provider's error that says it is transient")
    flagged.retryable = True  # type: ignore[attr-defined]
    assert not is_programming_error(flagged) and is_retryable(flagged)
    assert not is_programming_error(ValueError()) and is_retryable(ValueError())


def test_a_programming_error_in_a_managed_child_ends_the_run_too() -> None:
    child = graph(
        """
        digraph child {
            start [shape=Mdiamond]; done [shape=Msquare]
            boom [type="raises"]
            start -> boom -> done
        }
        """,
        path="/pipelines/child.dot",
    )
    parent = graph(
        """
        digraph parent {
            graph [stack.child_dotfile="child.dot"]
            start [shape=Mdiamond]; done [shape=Msquare]
            boss [shape=house, manager.poll_interval="10ms", max_retries=2]
            start -> boss -> done
        }
        """,
        path="/pipelines/parent.dot",
    )
    handler = Raises(AttributeError("no attribute 'x'"))
    harness = Harness(handlers={"raises": handler}, pipeline_loader=lambda path: child)
    with pytest.raises(StageCrashed, match=r"node boom: .*AttributeError"):
        harness.run(parent)
    assert handler.calls == 1


def test_a_cancelled_cli_agent_is_killed_with_its_group(tmp_path: Path) -> None:
    from orchestra_adapters.backends.cli_agent.process import AgentProcess

    late = tmp_path / "late"
    cancel = Cancellation()
    script = f"cat > /dev/null; echo working; (sleep 2; echo late > {late}) & sleep 2"
    started = time.monotonic()
    with AgentProcess(["/bin/sh", "-c", script], cwd=tmp_path, env={}, stdin_text="prompt", timeout_s=60,
                      cancel=cancel) as process:
        lines = process.lines()
        assert next(lines).strip() == "working"
        cancel.cancel("node x timed out after 1s")
        assert list(lines) == []  # stdout closed: the group is dead
        process.wait()
    assert process.cancelled and not process.timed_out and time.monotonic() - started < 1.9  # uncancelled, it takes 2 s
    time.sleep(2.5)
    assert not late.exists()
