"""A session's trace across its runs: a failed run, its resume (the same trace, under the first run's root) and a
replay (a new trace, linked to the session it forks); retries as one stage span per attempt."""

from __future__ import annotations

from pathlib import Path

import pytest
from attrs import frozen

from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.spans import Span, SpanStatus, session_trace
from tests.support.environment import hermetic_env
from tests.support.orchestra_project import open_store, orchestra, records_of, run_json, write_files
from tests.support.otlp_receiver import OtlpReceiver

PIPELINE = """digraph gated {
  start [shape=Mdiamond]; exit [shape=Msquare]
  prepare [shape=parallelogram, tool_command="echo prepared"]
  gate [shape=parallelogram, tool_command="test -f go", max_retries=1, retry_initial_delay="10ms"]
  start -> prepare -> gate -> exit
}
"""


@frozen
class Runs:
    project: Path
    first: list[Span]
    resumed: list[Span]
    replayed: list[Span]
    replay_session: str


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("continuity")
    (root / "home").mkdir()
    project = root / "project"
    write_files(project, {"orchestra.yaml": "backend: simulate\n", "gated.dot": PIPELINE})
    with OtlpReceiver() as receiver:
        env = {**hermetic_env(root / "home"), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        failed = orchestra("run", "gated.dot", cwd=project, env=env)
        assert failed.returncode == 1, failed.stderr
        first = [received.span for received in receiver.spans()]
        (project / "go").write_text("", encoding="utf-8")
        assert run_json("resume", "1", cwd=project, env=env)["status"] == "success"
        resumed = [received.span for received in receiver.spans()][len(first) :]
        [checkpoint] = [t for t, r in records_of(project, "1", CheckpointRecord) if r.current_node == "prepare"][:1]
        replay = run_json("replay", "1", "--checkpoint", checkpoint.turn_id, cwd=project, env=env)
        replayed = [received.span for received in receiver.spans()][len(first) + len(resumed) :]
    return Runs(project, first, resumed, replayed, replay["session_id"])


def _root(spans: list[Span], name: str) -> Span:
    [root] = [span for span in spans if span.name == name]
    return root


def test_a_failed_run_says_so_on_its_root_and_its_stage(runs: Runs) -> None:
    root = _root(runs.first, "run gated")
    assert root.parent is None and root.status is SpanStatus.ERROR
    assert dict(root.attributes)["orchestra.session.status"] == "fail"
    assert "gate" in root.status_message and root.status_message == dict(root.attributes)["orchestra.failure_reason"]
    attempts = sorted((span for span in runs.first if span.name == "stage gate"), key=lambda span: span.start)
    assert [dict(span.attributes)["orchestra.stage.attempt"] for span in attempts] == [1, 2]
    assert all(span.status is SpanStatus.ERROR and span.parent == root.context for span in attempts)
    assert attempts[0].end <= attempts[1].start  # the second attempt begins after the first and its backoff
    assert "orchestra.failure_reason" in dict(attempts[1].attributes)


def test_a_resumed_run_continues_the_sessions_trace_under_its_first_root(runs: Runs) -> None:
    first = _root(runs.first, "run gated")
    resumed = _root(runs.resumed, "resume gated")
    assert resumed.parent == first.context  # the same trace, a child of the first run's root
    assert {span.context.trace_id for span in runs.first + runs.resumed} == {first.context.trace_id}
    with open_store(runs.project) as store:
        assert first.context == session_trace("1", store.get_session("1").created_at)
    assert resumed.status is SpanStatus.OK and dict(resumed.attributes)["orchestra.run.kind"] == "resume"
    gate = [span for span in runs.resumed if span.name == "stage gate"]
    assert len(gate) == 1 and gate[0].parent == resumed.context and gate[0].status is SpanStatus.OK
    assert not [span for span in runs.resumed if span.name == "stage prepare"]  # finished before: not run again


def test_a_replay_starts_a_new_trace_linked_to_the_session_it_forks(runs: Runs) -> None:
    first = _root(runs.first, "run gated")
    replay = _root(runs.replayed, "replay gated")
    assert replay.parent is None
    with open_store(runs.project) as store:
        expected = session_trace(runs.replay_session, store.get_session(runs.replay_session).created_at)
    assert replay.context == expected and expected.trace_id != first.context.trace_id
    assert [link.context for link in replay.links] == [first.context]
    assert dict(replay.attributes)["orchestra.replay.of_session"] == "1"
    assert {span.context.trace_id for span in runs.replayed} == {expected.trace_id}
