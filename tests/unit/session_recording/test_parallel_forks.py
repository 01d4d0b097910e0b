"""Parallel branches as forked sessions: shared history up to the fan-out, fan-in listing its branches, nested
fan-outs, a fan-out that runs again, and branches appending from threads at once."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from orchestra_core.model import records as r
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.testing.backends import ScriptedCodergenBackend
from tests.support.engine import graph
from tests.support.sessions import RecordedRun, records, story, turns

FAN = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; l [prompt=l]; r [prompt=r]; merge [shape=tripleoctagon]
    start -> fan
    fan -> l
    fan -> r
    l -> merge
    r -> merge
    merge -> done
}
"""
NESTED = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    outer [shape=component]; a [prompt=a]; inner [shape=component]; x [prompt=x]; y [prompt=y]
    join_in [shape=tripleoctagon]; join_out [shape=tripleoctagon]
    start -> outer
    outer -> a
    outer -> inner
    inner -> x
    inner -> y
    x -> join_in
    y -> join_in
    join_in -> join_out
    a -> join_out
    join_out -> done
}
"""
AGAIN = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    fan [shape=component]; l [prompt=l]; r [prompt=r]; merge [shape=tripleoctagon]; check [prompt=c]
    start -> fan
    fan -> l
    fan -> r
    l -> merge
    r -> merge
    merge -> check
    check -> fan [condition="outcome=fail"]
    check -> done [condition="outcome=success"]
}
"""


def _fan_ins(store: SessionStore, session: str, node: str) -> list[tuple[str, ...]]:
    return [
        x.branch_session_ids
        for x in records(store, session)
        if isinstance(x, r.ParallelExecution) and x.event is r.ParallelEvent.FAN_IN and x.node_id == node
    ]


def _ids(store: SessionStore, session: str) -> list[str]:
    return [turn.turn_id for turn in turns(store, session)]


def _branch_of(store: SessionStore, session: str) -> str:
    return store.get_session(session).metadata.title.removeprefix("branch ")


def test_each_branch_is_a_fork_sharing_the_main_line_up_to_the_fan_out(store: SessionStore) -> None:
    run = RecordedRun(store)
    assert run.run(graph(FAN)).succeeded
    main = story(store, run.session_id)
    assert main[5:10] == [
        "node fan started",
        "fan_out fan",
        "fan_in fan",
        "node fan completed",
        "checkpoint fan",
    ]
    (forks,) = _fan_ins(store, run.session_id, "fan")
    assert sorted(_branch_of(store, fork) for fork in forks) == ["fan:l", "fan:r"]
    assert run.recorder.branch_sessions() == {_branch_of(store, fork): fork for fork in forks}
    shared = _ids(store, run.session_id)[:7]  # up to and including the FAN_OUT turn
    for fork in forks:
        info = store.get_session(fork)
        assert (info.metadata.parent_session_id, info.metadata.spawn_reason) == (run.session_id, "parallel")
        assert info.metadata.pipeline == "p"
        branch = _branch_of(store, fork).split(":")[1]
        assert _ids(store, fork)[:7] == shared
        assert story(store, fork)[7:] == [
            f"branch_started fan {branch}",
            f"node {branch} started",
            f"node {branch} completed",
            f"branch_completed fan {branch}",
        ]
        started, *_, completed = records(store, fork)[7:]
        assert isinstance(started, r.ParallelExecution) and started.branch_session_id == fork
        assert isinstance(completed, r.ParallelExecution) and completed.status is not None
        assert completed.status.value == "success"
    assert not set(_ids(store, run.session_id)) & {t for fork in forks for t in _ids(store, fork)[7:]}


def test_nested_fan_outs_fork_from_their_branch_and_fan_ins_list_only_their_own(store: SessionStore) -> None:
    run = RecordedRun(store)
    assert run.run(graph(NESTED)).succeeded
    (outer,) = _fan_ins(store, run.session_id, "outer")
    assert sorted(_branch_of(store, fork) for fork in outer) == ["outer:a", "outer:inner"]
    inner_line = next(fork for fork in outer if _branch_of(store, fork) == "outer:inner")
    (inner,) = _fan_ins(store, inner_line, "inner")
    assert sorted(_branch_of(store, fork) for fork in inner) == ["outer:inner/inner:x", "outer:inner/inner:y"]
    fan_out = story(store, inner_line).index("fan_out inner")
    for fork in inner:
        assert store.get_session(fork).metadata.parent_session_id == inner_line
        assert _ids(store, fork)[: fan_out + 1] == _ids(store, inner_line)[: fan_out + 1]
        node = _branch_of(store, fork)[-1]
        assert story(store, fork)[fan_out + 1 :] == [
            f"branch_started inner {node}",
            f"node {node} started",
            f"node {node} completed",
            f"branch_completed inner {node}",
        ]


def test_a_fan_out_that_runs_again_forks_new_branches_from_where_the_run_is(store: SessionStore) -> None:
    run = RecordedRun(store, backend=ScriptedCodergenBackend({"check": ["fail", "success"]}))
    assert run.run(graph(AGAIN)).succeeded
    first, second = _fan_ins(store, run.session_id, "fan")
    assert not set(first) & set(second)
    main = _ids(store, run.session_id)
    fan_outs = [i for i, line in enumerate(story(store, run.session_id)) if line == "fan_out fan"]
    for forks, fan_out in ((first, fan_outs[0]), (second, fan_outs[1])):
        for fork in forks:
            branch = _branch_of(store, fork).split(":")[1]
            assert _ids(store, fork)[: fan_out + 1] == main[: fan_out + 1]
            assert story(store, fork)[fan_out + 1 :] == [
                f"branch_started fan {branch}",
                f"node {branch} started",
                f"node {branch} completed",
                f"branch_completed fan {branch}",
            ]


CHILD = graph(
    """digraph child {
        start [shape=Mdiamond]; done [shape=Msquare]
        step [prompt=s]
        start -> step -> done
    }""",
    path="/pipelines/child.dot",
)
SUPERVISED = """
digraph p {
    graph [stack.child_dotfile="child.dot"]
    start [shape=Mdiamond]; done [shape=Msquare]
    boss [shape=house, manager.poll_interval="10ms"]; check [prompt=c]
    start -> boss -> check
    check -> boss [condition="outcome=fail"]
    check -> done [condition="outcome=success"]
}
"""


def test_each_child_run_of_a_manager_loop_is_a_fresh_fork_of_where_the_run_is(store: SessionStore) -> None:
    run = RecordedRun(
        store,
        backend=ScriptedCodergenBackend({"check": ["fail", "success"]}),
        pipeline_loader=lambda _path: CHILD,
    )
    assert run.run(graph(SUPERVISED, path="/pipelines/p.dot")).succeeded
    children = [i.session_id for i in store.list_sessions() if i.metadata.title == "branch boss.child"]
    assert len(children) == 2
    main_ids, main_story = _ids(store, run.session_id), story(store, run.session_id)
    boss_starts = [i for i, line in enumerate(main_story) if line == "node boss started"]
    for child, fork_point in zip(sorted(children, key=int), boss_starts, strict=True):
        assert store.get_session(child).metadata.parent_session_id == run.session_id
        assert _ids(store, child)[: fork_point + 1] == main_ids[: fork_point + 1]
        own = story(store, child)[fork_point + 1 :]
        assert own == [
            line
            for node in ("start", "step", "done")
            for line in (f"node {node} started", f"node {node} completed")
        ]


class _ChattyBackend:
    """Every stage takes three agent turns, so branches running at once append from several threads."""

    def run(
        self, node: Node, prompt: str, context: Any, on_turn: Callable[[AgentTurn], None] | None = None
    ) -> str:
        assert on_turn is not None
        for number in (1, 2, 3):
            on_turn(
                AgentTurn(
                    node.id, number, "m", "scripted", messages=({"role": "assistant", "content": "x" * 50},)
                )
            )
        return "ok"


def test_branches_appending_from_threads_at_once_lose_nothing(store: SessionStore) -> None:
    width, depth = 8, 3
    chains = "\n".join(
        f"fan -> b{i}_0\n"
        + "".join(f"b{i}_{d} -> b{i}_{d + 1}\n" for d in range(depth - 1))
        + f"b{i}_{depth - 1} -> merge"
        for i in range(width)
    )
    nodes = "\n".join(f'b{i}_{d} [prompt="p"]' for i in range(width) for d in range(depth))
    pipeline = graph(
        f"""digraph p {{
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component, max_parallel={width}]; merge [shape=tripleoctagon]
            {nodes}
            start -> fan
            {chains}
            merge -> done
        }}"""
    )
    run = RecordedRun(store, backend=_ChattyBackend())
    assert run.run(pipeline).succeeded
    (forks,) = _fan_ins(store, run.session_id, "fan")
    assert len(set(forks)) == width
    for fork in forks:
        history = turns(store, fork)
        assert all(t.parent_turn_id == p.turn_id for p, t in itertools.pairwise(history))
        own = story(store, fork)[7:]
        branch = _branch_of(store, fork).split(":")[1][:2]
        expected = []
        for d in range(depth):
            node = f"{branch}_{d}"
            expected += [
                f"node {node} started",
                *(f"agent {node} {n}" for n in (1, 2, 3)),
                f"node {node} completed",
            ]
        assert own == [f"branch_started fan {branch}_0", *expected, f"branch_completed fan {branch}_0"]


def test_threads_recording_agent_turns_on_many_lines_at_once_lose_nothing(store: SessionStore) -> None:
    run = RecordedRun(store)
    recorder = run.recorder
    recorder.on_workspace_event(None)  # not a workspace event: records nothing
    assert store.head(run.session_id).turn_id is None
    recorder.record_agent_turn(AgentTurn("main", 0, "m", "p"))  # branches fork from a turn, so start the line
    barrier = threading.Barrier(6)

    def agent(line: str | None) -> None:
        barrier.wait()
        for number in range(1, 41):
            recorder.record_agent_turn(AgentTurn(line or "main", number, "m", "p"), line)

    threads = [
        threading.Thread(target=agent, args=(line,))
        for line in (None, "f:a", "f:b", "f:c", "f:a/g:x", "h.child")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = {None: run.session_id, **recorder.branch_sessions()}
    assert set(lines) == {None, "f:a", "f:b", "f:c", "f:a/g:x", "h.child"}
    for line, session in lines.items():
        own = [
            x
            for x in records(store, session)
            if isinstance(x, AgentTurn) and x.node_id == (line or "main")
        ]
        assert [x.turn_number for x in own] == list(range(0 if line is None else 1, 41))
    assert len(set(lines.values())) == 6
