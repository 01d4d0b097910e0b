"""Delta checkpoints: every stored record expands back to exactly the full checkpoint it stands for."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise

from attrs import evolve
from hypothesis import given
from hypothesis import strategies as st

from orchestra_core.model.checkpoint import Checkpoint
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.records import CheckpointRecord
from orchestra_core.ports.session_store import SessionMetadata
from orchestra_core.session.api import append_record, latest_checkpoint
from orchestra_core.session.checkpoints import (
    FULL_SHARE,
    CheckpointDeltas,
    PipelineSource,
    RepoHead,
    expand_checkpoint,
    to_record,
)
from orchestra_core.testing.session_store import InMemorySessionStore

FULL_EVERY = 8  # small, so a few dozen steps cross several full checkpoints
NODES = ["plan", "build", "test", "review", "fix"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
step = st.tuples(
    st.sampled_from(NODES),
    st.sampled_from(list(StageStatus)),
    st.dictionaries(st.sampled_from(["a", "b", "c.d", "e"]), json_values, max_size=3),
    st.lists(st.sampled_from(["a", "b", "c.d", "e"]), max_size=2),
    st.booleans(),  # a loop restart: history starts over
)


def run_of(steps: list[tuple]) -> list[Checkpoint]:
    """The checkpoints an engine would take through these steps."""
    completed: tuple[str, ...] = ()
    outcomes: dict[str, Outcome] = {}
    context: dict[str, object] = {"graph.goal": "g"}
    logs: tuple[str, ...] = ()
    taken = []
    for number, (node, status, updates, removed, restart) in enumerate(steps):
        if restart:
            completed, outcomes, logs = (), {}, ()
        completed += (node,)
        outcomes = {**outcomes, node: Outcome(status, notes=f"visit {number}")}
        context = {key: value for key, value in context.items() if key not in removed}
        context.update(updates)
        logs += (f"{node} done",)
        taken.append(
            Checkpoint(
                current_node=node, completed_nodes=completed, node_outcomes=outcomes, node_retries={},
                context=dict(context), timestamp=datetime(2026, 1, 1, tzinfo=UTC), next_node="x",
                logs=logs, workspace_snapshot={"repo": f"{number:040x}"}, node_visits=number + 1,
            )
        )
    return taken


@given(st.lists(step, min_size=1, max_size=2 * FULL_EVERY + 5))
def test_every_record_expands_to_the_full_checkpoint(steps: list[tuple]) -> None:
    deltas = CheckpointDeltas(FULL_EVERY)
    stored: dict[str, CheckpointRecord] = {}
    repos = {"repo": RepoHead("orchestra/p/1", "0" * 40, "f" * 40)}
    source = PipelineSource("p.dot", "ab" * 32)
    for number, checkpoint in enumerate(run_of(steps)):
        record = deltas.record(checkpoint, repos=repos, source=source)
        turn_id = str(number + 1)
        stored[turn_id] = record
        deltas.remember(checkpoint, record, turn_id)
        assert record.chain_length < FULL_EVERY
        assert expand_checkpoint(record, stored.__getitem__) == to_record(checkpoint, repos=repos, source=source)


def test_a_linear_run_stores_only_what_each_node_adds() -> None:
    steps = [(NODES[i % len(NODES)] + str(i), StageStatus.SUCCESS, {"k": i}, [], False) for i in range(200)]
    deltas = CheckpointDeltas(FULL_EVERY)
    sizes, fulls = [], []
    for number, checkpoint in enumerate(run_of(steps)):
        record = deltas.record(checkpoint)
        deltas.remember(checkpoint, record, str(number + 1))
        sizes.append(len(record.completed_nodes) + len(record.node_outcomes))
        if record.base_turn_id is None:
            fulls.append(number)
    deltas_only = [size for number, size in enumerate(sizes) if number not in fulls]
    assert max(deltas_only) == 2  # one node appended, one outcome changed
    assert max(sizes) > 100  # the periodic full checkpoints carry everything
    # fulls restate every node, so they come at most once per FULL_SHARE of the nodes: flat cost per node
    assert all(later - earlier >= max(FULL_EVERY, earlier // FULL_SHARE) for earlier, later in pairwise(fulls))
    assert len(fulls) < len(steps) // FULL_EVERY


def test_latest_checkpoint_expands_deltas_from_the_store() -> None:
    store = InMemorySessionStore()
    session = store.create_session(SessionMetadata(pipeline="p")).session_id
    deltas = CheckpointDeltas(FULL_EVERY)
    steps = [(f"n{i}", StageStatus.SUCCESS, {f"k{i % 3}": i}, [], False) for i in range(40)]
    checkpoints = run_of(steps)
    for checkpoint in checkpoints:
        record = deltas.record(checkpoint)
        turn = append_record(store, session, record)
        deltas.remember(checkpoint, record, turn.turn_id)
    found = latest_checkpoint(store, session)
    assert found is not None and not found.checkpoint.is_delta
    assert found.checkpoint == to_record(checkpoints[-1])


@given(st.lists(step, min_size=1, max_size=2 * FULL_EVERY + 5), st.lists(st.booleans(), min_size=40, max_size=40))
def test_a_delta_holds_the_snapshot_only_when_a_head_moved(steps: list[tuple], moves: list[bool]) -> None:
    deltas = CheckpointDeltas(FULL_EVERY)
    stored: dict[str, CheckpointRecord] = {}
    source = PipelineSource("p.dot", "ab" * 32)
    head, last_recorded = 0, None
    for number, checkpoint in enumerate(run_of(steps)):
        head += moves[number]
        sha = f"{head:040x}"
        checkpoint = evolve(checkpoint, workspace_snapshot={"repo": sha})
        repos = {"repo": RepoHead("orchestra/p/1", sha, "f" * 40)}
        record = deltas.record(checkpoint, repos=repos, source=source)
        stored[str(number + 1)] = record
        new = deltas.remember(checkpoint, record, str(number + 1))
        if record.is_delta:
            assert (record.workspace_snapshot is not None) == (sha != last_recorded)
        else:
            assert record.workspace_snapshot is not None  # a full record restates it
        assert new == (sha != last_recorded)
        last_recorded = sha
        assert expand_checkpoint(record, stored.__getitem__) == to_record(checkpoint, repos=repos, source=source)


def test_a_resumed_run_does_not_report_the_heads_it_was_restored_to() -> None:
    deltas = CheckpointDeltas(FULL_EVERY)
    repos = {"repo": RepoHead("orchestra/p/1", "a" * 40, "f" * 40)}
    deltas.continue_from(repos)
    [checkpoint] = run_of([("plan", StageStatus.SUCCESS, {}, [], False)])
    checkpoint = evolve(checkpoint, workspace_snapshot={"repo": "a" * 40})
    record = deltas.record(checkpoint, repos=repos)
    assert record.workspace_snapshot is not None and not deltas.remember(checkpoint, record, "1")


def test_a_loop_restart_is_recorded_whole_even_when_the_history_ends_alike() -> None:
    # Before the restart: plan, build. After it, the run went plan, build again: same length, same last node.
    before, after = run_of([("plan", StageStatus.SUCCESS, {}, [], False), ("build", StageStatus.SUCCESS, {}, [], False)])
    restarted = evolve(after, loop_restarts=1, completed_nodes=("plan", "build"))
    deltas = CheckpointDeltas(FULL_EVERY)
    deltas.remember(before, deltas.record(before), "1")
    deltas.remember(after, deltas.record(after), "2")
    record = deltas.record(restarted)
    assert record.base_turn_id is None
    assert record.completed_nodes == ("plan", "build")


def test_outcomes_already_storable_are_not_copied_nor_kept_a_second_time() -> None:
    plain = Outcome(StageStatus.SUCCESS, context_updates={"last_stage": "plan", "count": 3})
    odd = Outcome(StageStatus.SUCCESS, context_updates={"when": datetime(2026, 1, 1, tzinfo=UTC)})
    checkpoint = Checkpoint(
        current_node="build",
        completed_nodes=("plan", "build"),
        node_outcomes={"plan": plain, "build": odd},
        node_retries={},
        context={},
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
    )
    deltas = CheckpointDeltas(FULL_EVERY)
    for _ in range(2):  # a full record restates every outcome: the copy made once is reused
        record = deltas.record(checkpoint)
        assert record.node_outcomes["plan"] is plain
        assert dict(record.node_outcomes["build"].context_updates) == {"when": "2026-01-01 00:00:00+00:00"}
    assert list(deltas._plain) == ["build"]  # a long run holds an entry only for the outcomes it had to copy
