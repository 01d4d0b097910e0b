"""What cost accounting adds to a run; prints one JSON object.

Measures, per agent turn, what the run's spending meter does between a backend reporting a turn and the next one:
pricing it from its tokens (the price table's name rule included), adding it up, and checking the budgets
(`price` + `add`), without a budget and with every session budget and a node budget set. Also what a budgeted run
pays once at its start: reading what the session had spent from a SQLite store's running totals, for a session of
`--turns` agent turns with parallel branch sessions. Target: well under a millisecond per turn (an LLM turn takes
seconds), and a start that does not grow with the session.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from attrs import evolve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore  # noqa: E402
from orchestra_core.model.budget import Budget  # noqa: E402
from orchestra_core.model.builtin_prices import price_table  # noqa: E402
from orchestra_core.model.money import Money  # noqa: E402
from orchestra_core.model.turn import AgentTurn, TokenUsage  # noqa: E402
from orchestra_core.ports.clock import SystemClock  # noqa: E402
from orchestra_core.ports.session_store import SessionMetadata  # noqa: E402
from orchestra_core.runs.spending import RunSpending  # noqa: E402
from orchestra_core.session.api import append_record, fork_session  # noqa: E402
from orchestra_core.session.spending import session_spending  # noqa: E402

TARGET_PER_TURN_US = 1000.0
TURN = AgentTurn(
    node_id="implement", turn_number=0, model="claude-sonnet-4-5-20250929", provider="anthropic",
    token_usage=TokenUsage(12_000, 800, cache_read_tokens=9_000, cache_write_tokens=1_000),
)  # fmt: skip


def per_turn_us(budget: Budget, node_budgets: dict[str, Budget], turns: int) -> dict[str, float]:
    """Microseconds the meter spends on one turn (`price` + `add`), median of 5 batches of `turns`."""
    batches = []
    for _ in range(5):
        meter = RunSpending("1", price_table(), budget, node_budgets, SystemClock())
        started = time.perf_counter()
        for _ in range(turns):
            meter.add(meter.price(TURN))
        batches.append((time.perf_counter() - started) / turns * 1e6)
    return {"median_us": round(statistics.median(batches), 2), "max_us": round(max(batches), 2)}


def start_read_ms(turns: int, branches: int) -> dict[str, float]:
    """Milliseconds to read what a recorded session spent (its totals and its branch sessions')."""
    with tempfile.TemporaryDirectory() as directory:
        store = SqliteSessionStore(Path(directory) / "orchestra.db")
        session = store.create_session(SessionMetadata(pipeline="bench")).session_id
        priced = evolve(TURN, cost_usd=0.05)
        for n in range(turns):
            head = append_record(store, session, priced if n % 2 else TURN).turn_id
            if n % max(turns // branches, 1) == 0 and branches:
                branch = fork_session(store, session, head, spawn_reason="parallel").session_id
                append_record(store, branch, TURN)
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            spent = session_spending(store, session)
            timings.append((time.perf_counter() - started) * 1000)
        store.close()
    return {"median_ms": round(statistics.median(timings), 2), "agent_turns_counted": spent.tokens // TURN.token_usage.total_tokens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20_000)
    arguments = parser.parse_args()
    budgeted = Budget(Money.usd(1000), 10**12, 10**6)
    result = {
        "benchmark": "cost",
        "per_turn_without_budget": per_turn_us(Budget(), {}, arguments.turns),
        "per_turn_with_budgets": per_turn_us(budgeted, {"implement": Budget(Money.usd(500), 10**12)}, arguments.turns),
        "budgeted_start_read": start_read_ms(min(arguments.turns, 5000), branches=20),
        "target_per_turn_us": TARGET_PER_TURN_US,
    }
    worst = max(result["per_turn_without_budget"]["median_us"], result["per_turn_with_budgets"]["median_us"])
    result["ok"] = worst < TARGET_PER_TURN_US
    print(json.dumps(result))


if __name__ == "__main__":
    main()
