"""Progress lines for `orchestra run` (plain output; the rich view is exercised in tests/e2e/run)."""

from __future__ import annotations

import io

from orchestra_adapters.console.progress import PlainProgress, describe
from orchestra_core.model.events import (
    CheckpointSaved,
    PipelineStarted,
    StageCompleted,
    StageFailed,
    StageRetrying,
)
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.testing.clock import ManualClock
from tests.support.engine import Harness, linear

NOW = ManualClock().now()


def test_stage_lines() -> None:
    done = StageCompleted(session_id="s", timestamp=NOW, node_id="plan", handler_type="codergen", index=2,
                          outcome=Outcome(StageStatus.SUCCESS), attempts=2, duration_s=2.25)
    assert describe(done) == "ok plan success in 2.2s after 2 attempts"
    failed = StageFailed(session_id="s", timestamp=NOW, branch="fan:a", node_id="t", handler_type="tool", index=1,
                         outcome=Outcome.fail("exit code 1"), attempts=1, duration_s=0.05, will_retry=True)
    assert describe(failed) == "[fan:a] x t attempt failed in 50ms: exit code 1"
    retry = StageRetrying(session_id="s", timestamp=NOW, node_id="t", handler_type="tool", index=1, attempt=2,
                          delay_s=0.4, reason="x")
    assert describe(retry) == "~ t retrying (attempt 2) in 400ms"


def test_checkpoints_get_no_line() -> None:
    harness = Harness()
    harness.run(linear("a"))
    assert describe(harness.log.of(CheckpointSaved)[0]) is None


def test_plain_progress_writes_one_line_per_interesting_event() -> None:
    stream = io.StringIO()
    Harness(observers=[PlainProgress(stream)]).run(linear("a"))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "pipeline p started" and lines[-1].startswith("pipeline succeeded in")
    assert "> a (codergen)" in lines and len(lines) == 8


def test_plain_progress_stops_quietly_when_the_reader_goes_away() -> None:
    class Closed(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            Closed.writes += 1
            raise BrokenPipeError

    progress = PlainProgress(Closed())
    event = PipelineStarted(session_id="s", timestamp=NOW, name="p", goal="", logs_root="/r", start_node="start")
    progress.on_event(event)
    progress.on_event(event)
    assert Closed.writes == 1
