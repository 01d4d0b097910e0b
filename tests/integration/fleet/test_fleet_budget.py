"""A budget with parallel branches a fleet worker runs (in one process: the session's machine and a worker sharing a
SQLite store, the in-memory dispatcher and ledger, real git): the worker's branch counts what the whole session
spent, its turns are recorded into the shared store, and the session's runner reads them there, so the run ends
`budget_exceeded` after the fan-out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.ports.session_store import SessionStatus
from orchestra_core.session.spending import session_spending
from tests.integration.fleet.test_branches_in_one_process import Machines, _yaml

PIPELINE = """digraph fan {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    a [prompt="A"]; b [prompt="B"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> a -> join
    fan -> b -> join
    join -> exit
}
"""
# each reply reads a file (so the loop goes on) and reports 1,000 input tokens: $1 at the price below
_TURN = "    - {content: step, tool_calls: [{name: 'project:read-file', args: {path: README.md}}], usage: {input_tokens: 1000}}\n"
CASSETTE = "nodes:\n" + "".join(f"  {node}:\n" + _TURN * 4 + "    - done\n" for node in ("a", "b"))
BUDGET = """providers:
  default: scripted
  scripted: {cassette: cassette.yaml, models: {worker: house-model}}
backend: langgraph
pricing:
  house-model: {input: 1000, output: 0}
budget: {max_cost_usd: 3}
"""


class BudgetedMachines(Machines):
    """Every machine's orchestra.yaml has the scripted provider, a price and the budget."""

    def container(self, name: str, holder: str, yaml: str | None = None) -> Any:
        return super().container(name, holder, yaml or _yaml(self.store_path, self.remote) + BUDGET)


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    found = BudgetedMachines(tmp_path)
    found.pipeline = PIPELINE
    for name in ("parent", "w1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cassette.yaml").write_text(CASSETTE, encoding="utf-8")
    yield found
    found.close()


def test_a_workers_branches_count_toward_the_session_and_the_runner_stops_after_the_fan_out(machines: Machines) -> None:
    worker = machines.worker("w1")
    result, run = machines.run_session()

    assert sorted(task.payload["branch"] for task in worker.ran) == ["fan:a", "fan:b"]
    assert result.status is RunStatus.BUDGET_EXCEEDED, result.failure_reason
    assert "the session's budget max_cost_usd is reached" in result.failure_reason
    store = run.ports.store
    assert store is not None and store.get_session(run.session_id).status is SessionStatus.BUDGET_EXCEEDED
    spent = session_spending(store, run.session_id).cost.known.amount  # the worker's turns, read from the store
    assert 3 <= spent < 10  # each branch stopped at its next turn boundary, far before its 4 paid turns each
    assert result.checkpoint is not None and result.checkpoint.next_node == "fan"
