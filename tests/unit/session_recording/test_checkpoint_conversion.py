"""Every checkpoint the recorder stores reads back as the engine's checkpoint: property tests over sequences of
checkpoints (context values of every JSON type, outcomes, retries, loop restarts, workspace heads), and the
reductions for values JSON cannot hold."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.model.checkpoint import Checkpoint, RunStatus
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import latest_checkpoint
from orchestra_core.session.checkpoints import RepoHead, from_record, plain_values
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.testing.session_store import InMemorySessionStore

WHEN = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
NODES = ("plan", "build", "test", "review")
KEYS = ("a", "b", "c.d", "outcome", "")

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
# Values Python calls equal although JSON (and a resumed run) tells them apart.
look_alikes = st.sampled_from([0, 1, 0.0, 1.0, -0.0, True, False, [1], [True], [1.0], {"x": 0}, {"x": False}])
context_values = look_alikes | json_values
outcomes = st.builds(
    Outcome,
    st.sampled_from(list(StageStatus)),
    preferred_label=st.text(max_size=8),
    suggested_next_ids=st.lists(st.sampled_from(NODES), max_size=2).map(tuple),
    context_updates=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3),
    notes=st.text(max_size=8),
    failure_reason=st.text(max_size=8),
)
steps = st.lists(
    st.fixed_dictionaries(
        {
            "node": st.sampled_from(NODES),
            "outcome": outcomes,
            "set": st.dictionaries(st.sampled_from(KEYS[:3]), context_values, max_size=3),
            "drop": st.lists(st.sampled_from(KEYS), max_size=2),
            "retries": st.integers(0, 3),
            "restart": st.integers(0, 9).map(lambda n: n == 0),
            "head": st.text("0123456789abcdef", min_size=40, max_size=40),
        }
    ),
    min_size=1,
    max_size=45,  # past several full checkpoints: the recorder below writes one every 8
)


def _run(taken: list[dict[str, Any]], end: RunStatus) -> list[Checkpoint]:
    """The checkpoints an engine takes through these steps (the engine's own data structures)."""
    completed: tuple[str, ...] = ()
    node_outcomes: dict[str, Outcome] = {}
    retries: dict[str, int] = {}
    context: dict[str, Any] = {"graph.goal": "g"}
    logs: tuple[str, ...] = ()
    restarts = 0
    checkpoints = []
    for number, step in enumerate(taken, 1):
        if step["restart"]:
            completed, node_outcomes, retries, logs, restarts = (), {}, {}, (), restarts + 1
            context = {"graph.goal": "g"}
        node = step["node"]
        completed += (node,)
        node_outcomes = {**node_outcomes, node: step["outcome"]}
        if step["retries"]:
            retries = {**retries, node: step["retries"]}
        context = {key: value for key, value in context.items() if key not in step["drop"]}
        context.update(step["set"])
        logs += (f"{node} #{number}",)
        last = number == len(taken)
        checkpoints.append(
            Checkpoint(
                current_node=node,
                completed_nodes=completed,
                node_outcomes=node_outcomes,
                node_retries=retries,
                context=dict(context),
                timestamp=WHEN,
                next_node=None if last and end is not RunStatus.RUNNING else NODES[number % len(NODES)],
                status=end if last else RunStatus.RUNNING,
                failure_reason="it broke" if last and end is RunStatus.FAIL else "",
                logs=logs,
                workspace_snapshot={"project": step["head"]},
                node_visits=number,
                loop_restarts=restarts,
            )
        )
    return checkpoints


def _same(left: Any, right: Any) -> bool:
    """Equal including types (so 1, 1.0 and True differ), at every depth."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    return left == right or (isinstance(left, float) and math.isnan(left) and math.isnan(right))


def _as_data(checkpoint: Checkpoint) -> dict[str, Any]:
    outcomes = {
        node: [
            o.status.value,
            o.preferred_label,
            list(o.suggested_next_ids),
            dict(o.context_updates),
            o.notes,
            o.failure_reason,
        ]
        for node, o in checkpoint.node_outcomes.items()
    }
    return {
        "current_node": checkpoint.current_node,
        "completed_nodes": list(checkpoint.completed_nodes),
        "node_outcomes": outcomes,
        "node_retries": dict(checkpoint.node_retries),
        "context": dict(checkpoint.context),
        "timestamp": checkpoint.timestamp.isoformat(),
        "next_node": checkpoint.next_node,
        "status": checkpoint.status.value,
        "failure_reason": checkpoint.failure_reason,
        "logs": list(checkpoint.logs),
        "workspace_snapshot": dict(checkpoint.workspace_snapshot),
        "node_visits": checkpoint.node_visits,
        "loop_restarts": checkpoint.loop_restarts,
    }


def _recorded(checkpoints: list[Checkpoint]) -> tuple[InMemorySessionStore, str, list[str]]:
    store = InMemorySessionStore()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    heads = {"project": RepoHead("orchestra/p/1", "0" * 40, "f" * 40)}
    recorder = SessionRecorder(store, session, pipeline_name="p", repo_heads=lambda: heads, full_every=8)
    turn_ids = []
    for checkpoint in checkpoints:
        recorder.save(checkpoint)
        turn = store.latest_checkpoint(session)  # a WorkspaceSnapshotRecorded turn may follow it
        assert turn is not None
        turn_ids.append(turn.turn_id)
    return store, session, turn_ids


@settings(max_examples=60)
@given(steps, st.sampled_from(list(RunStatus)))
def test_every_stored_checkpoint_reads_back_as_the_engines(
    taken: list[dict[str, Any]], end: RunStatus
) -> None:
    checkpoints = _run(taken, end)
    store, session, turn_ids = _recorded(checkpoints)
    for original, turn_id in zip(checkpoints, turn_ids, strict=True):
        found = latest_checkpoint(store, session, at_turn_id=turn_id)
        assert found is not None and found.turn.turn_id == turn_id
        read = from_record(found.checkpoint, WHEN)
        assert _same(_as_data(read), _as_data(original))


def test_values_json_cannot_hold_are_stored_as_text_instead_of_stopping_the_run() -> None:
    odd = {
        "when": WHEN,
        "path": Path("/srv/x"),
        "pair": (1, 2),
        "huge": 2**70,
        "tiny": -(2**64),
        "ok": 2**64 - 1,
    }
    outcome = Outcome(StageStatus.SUCCESS, context_updates=odd)
    checkpoint = _run(
        [
            {
                "node": "plan",
                "outcome": outcome,
                "set": odd,
                "drop": [],
                "retries": 0,
                "restart": False,
                "head": "a" * 40,
            }
        ],
        RunStatus.RUNNING,
    )[0]
    store, session, _ = _recorded([checkpoint])
    found = latest_checkpoint(store, session)
    assert found is not None
    expected = {
        "when": str(WHEN),
        "path": "/srv/x",
        "pair": [1, 2],
        "huge": str(2**70),
        "tiny": str(-(2**64)),
        "ok": 2**64 - 1,
    }
    assert {k: v for k, v in found.checkpoint.context_snapshot.items() if k in odd} == expected
    assert dict(found.checkpoint.node_outcomes["plan"].context_updates) == expected
    assert plain_values({"x": float("inf")}) == {"x": float("inf")}
