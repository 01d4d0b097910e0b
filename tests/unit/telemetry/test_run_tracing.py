"""A traced run's spans, built from its events by the core (`RunTracing`) and collected by the in-memory tracer:
the tree, the times (a manual clock), retries, parallel branches, turns with their tool calls and commits, the
trace of resumes and replays, and what an untraced run does not do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from orchestra_core import parse_pipeline, replay_session, resume_session, run_pipeline
from orchestra_core.model import events as e
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.spans import Span, SpanKind, SpanStatus, session_trace
from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall, TurnCommit
from orchestra_core.model.workspace_events import AgentCommitCreated
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.runs.tracing import RunTracing, TraceStart
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from orchestra_core.testing import InMemorySessionStore, InMemoryTracer, ManualClock

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class TurnsBackend:
    """Each node: `turns` agent turns of 2 s each (a 0.5 s tool call in the middle of each), on a manual clock."""

    def __init__(self, clock: ManualClock, turns: int = 2, fail_first: tuple[str, ...] = ()) -> None:
        self.clock = clock
        self.turns = turns
        self.fail_first = set(fail_first)

    def run(self, node: Node, prompt: str, context: Context, on_turn: OnTurn | None = None) -> str | Outcome:
        for number in range(self.turns):
            self.clock.advance(0.75)
            started = self.clock.now()
            self.clock.advance(0.5)
            self.clock.advance(0.75)
            call = ToolCall("repo:run-tests", call_id=f"c{number}", started_at=started, duration_s=0.5,
                            error="2 tests failed" if number == 0 else None)  # fmt: skip
            turn = AgentTurn(
                node.id, number, "acme-large", "anthropic", tool_calls=[call], duration_s=2.0,
                token_usage=TokenUsage(1000, 200, cache_read_tokens=600, cache_write_tokens=100),
                cost_usd=0.0123 if number == 0 else None, requested_model="acme-xl" if number else "",
            )  # fmt: skip
            if on_turn is not None:
                on_turn(turn)
        if node.id in self.fail_first:
            self.fail_first.discard(node.id)
            return Outcome.fail(f"{node.id} broke")
        return "done"


def _run(
    dot: str, backend: TurnsBackend | None = None, **kwargs: object
) -> tuple[InMemoryTracer, ManualClock]:
    clock = backend.clock if backend is not None else ManualClock(T0)
    tracer = InMemoryTracer()
    store = kwargs.pop("store", None) or InMemorySessionStore()
    run_pipeline(parse_pipeline(dot), store=store, backend=backend or TurnsBackend(clock), clock=clock, tracer=tracer,
                 **kwargs)  # type: ignore[arg-type]  # fmt: skip
    return tracer, clock


def _by_id(tracer: InMemoryTracer) -> dict[int, Span]:
    return {span.context.span_id: span for span in tracer.spans}


def _parent(tracer: InMemoryTracer, span: Span) -> Span:
    assert span.parent is not None
    return _by_id(tracer)[span.parent.span_id]


LINEAR = "digraph lin { start [shape=Mdiamond]; exit [shape=Msquare]; work [prompt=x]; start -> work -> exit }"


def test_an_untraced_run_builds_no_span_and_stamps_no_turn() -> None:
    seen: list[AgentTurn] = []
    clock = ManualClock(T0)

    class Recording(TurnsBackend):
        def run(self, node: Node, prompt: str, context: Context, on_turn: OnTurn | None = None) -> str | Outcome:
            return super().run(node, prompt, context, lambda turn: (seen.append(turn), on_turn and on_turn(turn)))

    events: list[object] = []
    run_pipeline(parse_pipeline(LINEAR), backend=Recording(clock), clock=clock, on_event=events.append)
    turns = [event.turn for event in events if isinstance(event, e.AgentTurnCompleted)]
    assert len(turns) == 2 and all(turn.ended_at is None for turn in turns)


def test_the_tree_of_a_linear_run_with_its_times() -> None:
    tracer, clock = _run(LINEAR)
    [root] = [span for span in tracer.spans if span.parent is None]
    assert tracer.spans[-1] == root  # the root ends last
    assert root.name == "run lin" and root.status is SpanStatus.OK and root.start == T0 and root.end == clock.now()
    stages = tracer.named("stage ")
    assert [span.name for span in stages] == ["stage start", "stage work", "stage exit"]
    assert all(span.parent == root.context and span.context.trace_id == root.context.trace_id for span in stages)
    work = stages[1]
    assert (work.start, work.end) == (T0, T0 + timedelta(seconds=4))
    turns = sorted(tracer.named("chat "), key=lambda span: span.start)
    assert [(t.start, t.end) for t in turns] == [
        (T0, T0 + timedelta(seconds=2)), (T0 + timedelta(seconds=2), T0 + timedelta(seconds=4))
    ]  # fmt: skip
    assert all(_parent(tracer, turn) == work and turn.kind is SpanKind.CLIENT for turn in turns)
    tools = sorted(tracer.named("execute_tool "), key=lambda span: span.start)
    assert [(t.start, t.end) for t in tools] == [
        (T0 + timedelta(seconds=0.75), T0 + timedelta(seconds=1.25)),
        (T0 + timedelta(seconds=2.75), T0 + timedelta(seconds=3.25)),
    ]
    assert [_parent(tracer, tool) for tool in tools] == turns
    assert tools[0].status is SpanStatus.ERROR and tools[0].status_message == "2 tests failed"
    assert dict(tools[0].attributes)["error.type"] == "tool_error" and tools[1].status is SpanStatus.UNSET


def test_a_turn_carries_the_genai_conventions_and_orchestras_attributes() -> None:
    tracer, _ = _run(LINEAR)
    first, second = sorted(tracer.named("chat "), key=lambda span: span.start)
    assert first.name == "chat acme-large"
    assert dict(first.attributes) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.system": "anthropic",
        "gen_ai.request.model": "acme-large", "gen_ai.response.model": "acme-large",
        "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 200,
        "gen_ai.usage.cache_read.input_tokens": 600, "gen_ai.usage.cache_creation.input_tokens": 100,
        "orchestra.session_id": "1", "orchestra.node_id": "work", "orchestra.turn_number": 0,
        "orchestra.tool_calls": 1, "orchestra.files_written": 0, "orchestra.cost_usd": 0.0123,
    }  # fmt: skip
    second_attributes = dict(second.attributes)
    assert "orchestra.cost_usd" not in second_attributes  # unknown cost: no attribute, never 0
    assert second_attributes["gen_ai.request.model"] == "acme-xl"  # failover: asked for one, another answered
    assert second_attributes["gen_ai.response.model"] == "acme-large"
    [tool] = [span for span in tracer.named("execute_tool ") if _parent(tracer, span) == first]
    assert dict(tool.attributes) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "repo:run-tests", "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "c0", "error.type": "tool_error",
    }  # fmt: skip


def test_each_attempt_of_a_retried_stage_is_a_span_starting_after_its_backoff() -> None:
    dot = """digraph r { start [shape=Mdiamond]; exit [shape=Msquare]
      work [prompt=x, max_retries=2, retry_initial_delay="3s"]; start -> work -> exit }"""
    clock = ManualClock(T0)
    tracer, _ = _run(dot, TurnsBackend(clock, turns=1, fail_first=("work",)))
    attempts = tracer.named("stage work")
    assert [dict(span.attributes)["orchestra.stage.attempt"] for span in attempts] == [1, 2]
    failed, passed = attempts
    assert failed.status is SpanStatus.ERROR and failed.status_message == "work broke"
    assert dict(failed.attributes)["orchestra.failure_reason"] == "work broke"
    [backoff] = clock.sleeps  # jittered around 3 s
    assert failed.end == T0 + timedelta(seconds=2) and passed.start == failed.end + timedelta(seconds=backoff)
    assert passed.status is SpanStatus.OK
    [late_turn] = [span for span in tracer.named("chat ") if span.start >= passed.start]
    assert _parent(tracer, late_turn) == passed


PARALLEL = """digraph par { start [shape=Mdiamond]; exit [shape=Msquare]
  fan [shape=component]; a [prompt=x]; b [prompt=y]; join [shape=tripleoctagon]
  start -> fan; fan -> a -> join; fan -> b -> join; join -> exit }"""


def test_parallel_branches_nest_under_their_node_each_with_its_stages() -> None:
    tracer, _ = _run(PARALLEL)
    [fan] = tracer.named("stage fan")
    branches = {span.name: span for span in tracer.named("branch ")}
    assert set(branches) == {"branch fan:a", "branch fan:b"}
    assert all(_parent(tracer, branch) == fan for branch in branches.values())
    for node in ("a", "b"):
        [stage] = tracer.named(f"stage {node}")
        assert _parent(tracer, stage) == branches[f"branch fan:{node}"]
        assert dict(stage.attributes)["orchestra.branch"] == f"fan:{node}"
        assert all(_parent(tracer, turn) == stage for turn in tracer.named("chat ") if dict(turn.attributes)["orchestra.node_id"] == node)
    assert dict(fan.attributes)["orchestra.parallel.success_count"] == 2


def _tracing(tracer: InMemoryTracer, clock: ManualClock, **start: object) -> RunTracing:
    fields: dict[str, object] = {"session_id": "7", "pipeline": "p", "kind": "new", "session": session_trace("7", T0)}
    return RunTracing(tracer, TraceStart(**{**fields, **start}), clock)  # type: ignore[arg-type]


def test_commits_follow_the_agents_work_each_ending_when_it_was_announced() -> None:
    clock = ManualClock(T0)
    tracer = InMemoryTracer()
    tracing = _tracing(tracer, clock)
    tracing.on_event(e.StageStarted(session_id="7", timestamp=T0, node_id="w", handler_type="codergen", index=1))
    clock.advance(10)
    ended = clock.now()
    clock.advance(1.5)
    tracing.on_event(AgentCommitCreated(repo="api", sha="a" * 40, branch="orchestra/p/7", node_id="w", turn_number=0,
                                        message="m", files=("x.py",)))  # fmt: skip
    clock.advance(0.5)
    tracing.on_event(AgentCommitCreated(repo="web", sha="b" * 40, branch="orchestra/p/7", node_id="w", turn_number=0,
                                        message="m", files=("y.ts",), message_source="fallback"))  # fmt: skip
    turn = AgentTurn("w", 0, "m", "openai", duration_s=10, ended_at=ended, files_written=("api:x.py", "web:y.ts"),
                     commits=(TurnCommit("api", "a" * 40, "m", "orchestra/p/7"), TurnCommit("web", "b" * 40, "m")))  # fmt: skip
    tracing.on_event(e.AgentTurnCompleted(session_id="7", timestamp=clock.now(), node_id="w", turn=turn))
    [chat] = tracer.named("chat ")
    assert (chat.start, chat.end) == (T0, T0 + timedelta(seconds=12))
    api, web = tracer.named("commit ")
    assert (api.name, api.start, api.end) == ("commit api", ended, ended + timedelta(seconds=1.5))
    assert (web.name, web.start, web.end) == ("commit web", api.end, api.end + timedelta(seconds=0.5))
    assert api.parent == web.parent == chat.context
    assert dict(api.attributes)["orchestra.commit_sha"] == "a" * 40
    assert dict(api.attributes)["orchestra.commit.files"] == ("x.py",)
    assert dict(api.attributes)["orchestra.git_branch"] == "orchestra/p/7"
    assert dict(web.attributes)["orchestra.commit.message_source"] == "fallback"


def test_a_supervised_child_runs_stages_under_the_stage_that_supervises_it() -> None:
    clock = ManualClock(T0)
    tracer = InMemoryTracer()
    tracing = _tracing(tracer, clock)
    tracing.on_event(e.StageStarted(session_id="7", timestamp=T0, node_id="boss", handler_type="stack.manager_loop", index=1))
    tracing.on_event(e.StageStarted(session_id="7", timestamp=T0, branch="manager.child", node_id="c", handler_type="codergen", index=1))
    tracing.end("interrupted", "stopped")
    child, boss, root = tracer.spans
    assert (child.name, boss.name) == ("stage c", "stage boss") and child.parent == boss.context
    assert child.status is SpanStatus.ERROR and "ended (interrupted)" in child.status_message
    assert root.status is SpanStatus.ERROR and root.status_message == "stopped"
    assert dict(root.attributes)["orchestra.session.status"] == "interrupted"
    tracing.end("success")  # only the first end counts
    tracing.on_event(e.StageStarted(session_id="7", timestamp=T0, node_id="late", handler_type="codergen", index=2))
    assert len(tracer.spans) == 3


def test_a_resume_continues_the_trace_under_the_first_root_and_a_replay_links_to_it() -> None:
    store = InMemorySessionStore()
    dot = "digraph g { start [shape=Mdiamond]; exit [shape=Msquare]; a [prompt=x]; b [prompt=y]; start -> a -> b -> exit }"
    clock = ManualClock(T0)
    first, _ = _run(dot, TurnsBackend(clock, turns=1, fail_first=("b",)), store=store)
    [root] = [span for span in first.spans if span.parent is None]
    assert root.context == session_trace("1", store.get_session("1").created_at)
    assert root.status is SpanStatus.ERROR and "b broke" in root.status_message
    resumed = InMemoryTracer()
    resume_session("1", store=store, backend=TurnsBackend(clock, turns=1), clock=clock, tracer=resumed)
    [again] = resumed.named("resume g")
    assert again.parent == root.context and again.context.trace_id == root.context.trace_id
    assert again.context.span_id != root.context.span_id
    assert {span.context.trace_id for span in resumed.spans} == {root.context.trace_id}
    checkpoint = next(t for t in reversed(list(history(store, "1"))) if isinstance(decode_record(t), CheckpointRecord))
    replayed = InMemoryTracer()
    result = replay_session("1", checkpoint.turn_id, store=store, backend=TurnsBackend(clock, turns=1), clock=clock,
                            tracer=replayed)  # fmt: skip
    [replay] = replayed.named("replay g")
    assert replay.parent is None
    assert replay.context == session_trace(result.session_id, store.get_session(result.session_id).created_at)
    assert [link.context for link in replay.links] == [root.context]
    assert dict(replay.attributes)["orchestra.replay.of_session"] == "1"


def test_the_sessions_trace_is_derived_from_its_id_and_creation_time() -> None:
    assert session_trace("1", T0) == session_trace("1", T0)
    assert session_trace("1", T0) != session_trace("1", T0 + timedelta(milliseconds=1))  # session 1 of another store
    assert session_trace("1", T0) != session_trace("2", T0)
    context = session_trace("1", None)
    assert 0 < context.trace_id < 2**128 and 0 < context.span_id < 2**64


@pytest.mark.parametrize("failing", ["export", "flush"])
def test_a_tracer_that_raises_never_reaches_the_run(failing: str) -> None:
    class Broken(InMemoryTracer):
        def export(self, span: Span) -> None:
            if failing == "export":
                raise RuntimeError("collector exploded")
            super().export(span)

        def flush(self, timeout_s: float) -> bool:
            raise RuntimeError("collector exploded")

    clock = ManualClock(T0)
    result = run_pipeline(parse_pipeline(LINEAR), backend=TurnsBackend(clock), clock=clock, tracer=Broken())
    assert result.status.value == "success"


def test_the_end_of_a_run_flushes_with_the_configured_bound() -> None:
    from orchestra_core.model.settings import OrchestraSettings, Seconds, TelemetrySettings

    tracer, _ = _run(LINEAR, settings=OrchestraSettings(telemetry=TelemetrySettings(flush_timeout=Seconds(2.5))))
    assert tracer.flushes == [2.5]

