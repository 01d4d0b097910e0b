"""The heartbeat of `orchestra run` on a terminal: how long the running stage has been running and which
agent turn it waits for (the rendering, with a fake clock; never timing)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from orchestra_adapters.console.progress import PlainProgress, RichProgress, RunningStage, heartbeat_line
from orchestra_cli.runtime.progress_feed import ProgressFeed
from orchestra_core.model.events import (
    AgentTurnCompleted,
    InterviewStarted,
    PipelineCompleted,
    StageCompleted,
    StageFailed,
    StageStarted,
)
from orchestra_core.model.interview import Question, QuestionType
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn

NOW = datetime(2026, 3, 12, 10, 15, tzinfo=UTC)


def started(node: str, handler: str = "codergen", branch: str | None = None) -> StageStarted:
    return StageStarted(
        session_id="1", timestamp=NOW, node_id=node, handler_type=handler, index=1, branch=branch
    )


def ended(node: str, *, failed: bool = False, will_retry: bool = False) -> StageCompleted | StageFailed:
    if failed:
        return StageFailed(
            session_id="1", timestamp=NOW, node_id=node, handler_type="codergen", index=1,
            outcome=Outcome.fail("boom"), attempts=1, duration_s=1.0, will_retry=will_retry,
        )  # fmt: skip
    return StageCompleted(
        session_id="1", timestamp=NOW, node_id=node, handler_type="codergen", index=1,
        outcome=Outcome.success(), attempts=1, duration_s=1.0,
    )  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_names_the_stage_its_elapsed_time_and_the_agent_turn() -> None:
    assert heartbeat_line({}, 5.0) is None
    agent = RunningStage("implement", "codergen", started_at=10.0, agent_turns=2)
    assert (
        heartbeat_line({"implement": agent}, 75.0)
        == "… implement running for 1m 05s, waiting for agent turn 2"
    )
    tool = RunningStage("check", "tool", started_at=10.0)
    assert heartbeat_line({"check": tool}, 14.2) == "… check running for 4.2s"
    both = heartbeat_line({"fan": RunningStage("fan", "parallel", 0.0), "check": tool}, 12.0)
    assert both == "… fan running for 12.0s; check running for 2.0s"


def test_the_view_follows_stages_and_agent_turns_on_the_main_line() -> None:
    clock = Clock()
    view = RichProgress(Console(file=io.StringIO(), force_terminal=False), clock=clock)
    view.on_event(started("implement"))
    clock.now += 3
    assert view.heartbeat() == "… implement running for 3.0s, waiting for agent turn 0"
    turn = AgentTurn("implement", 0, "scripted", "scripted")
    ProgressFeed([view])(AgentTurnCompleted(session_id="1", timestamp=NOW, node_id="implement", turn=turn))
    view.agent_turn("implement", 0, branch="fan:a")  # a branch's agent is not the main line's
    clock.now += 62
    assert view.heartbeat() == "… implement running for 1m 05s, waiting for agent turn 1"
    view.on_event(ended("implement", failed=True, will_retry=True))  # a retry: still running
    assert view.heartbeat() is not None
    view.on_event(ended("implement"))
    assert view.heartbeat() is None
    view.on_event(started("left", branch="fan:left"))
    assert view.heartbeat() is None


def test_a_terminal_shows_the_heartbeat_and_clears_it_when_the_stage_ends() -> None:
    out = io.StringIO()
    view = RichProgress(Console(file=out, force_terminal=True, width=120), clock=Clock())
    view.on_event(started("implement"))
    assert view._heartbeat is not None  # the live line is up
    assert "implement running for 0ms, waiting for agent turn 0" in out.getvalue()
    question = Question("Ship it?", QuestionType.YES_NO, stage="implement")
    view.on_event(InterviewStarted(session_id="1", timestamp=NOW, question=question, stage="implement"))
    assert view._heartbeat is None  # a question has the terminal to itself
    view.on_event(ended("implement"))
    view.on_event(
        PipelineCompleted(session_id="1", timestamp=NOW, duration_s=1.0, artifact_count=0, completed_nodes=())
    )
    assert view._heartbeat is None


def test_no_heartbeat_off_a_terminal() -> None:
    out = io.StringIO()
    view = RichProgress(Console(file=out, force_terminal=False), clock=Clock())
    view.on_event(started("implement"))
    assert view._heartbeat is None and "running for" not in out.getvalue()
    plain = io.StringIO()
    PlainProgress(plain).on_event(started("implement"))
    assert "running for" not in plain.getvalue()
