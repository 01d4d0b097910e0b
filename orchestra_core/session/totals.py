"""What each turn adds to its session's running totals (`SessionTotals`), read from the turn's tagged data."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from orchestra_core.model.pricing import recorded_cost
from orchestra_core.model.records import NodeEvent
from orchestra_core.model.turn import TokenUsage
from orchestra_core.ports.session_store import SessionTotals
from orchestra_core.session.catalog import (
    AGENT_TURN,
    CHECKPOINT,
    NODE_EVENT,
    NODE_EXECUTION,
    PARALLEL_EXECUTION,
    PIPELINE_LIFECYCLE,
    REMOTE_PUSHED,
    SESSION_BRANCH_CREATED,
    SESSION_CLEANED_UP,
    SESSION_ROLLED_BACK,
    TOKEN_USAGE,
)
from orchestra_core.session.schema import TypeSpec

NO_TOTALS = SessionTotals()


def _tag(spec: TypeSpec, name: str) -> int:
    return next(field.tag for field in spec.fields if field.name == name)


_TOKENS_TAG = _tag(AGENT_TURN, "token_usage")
_COST_TAG = _tag(AGENT_TURN, "cost_usd")
_PROMPT_TAG = _tag(TOKEN_USAGE, "prompt_tokens")
_COMPLETION_TAG = _tag(TOKEN_USAGE, "completion_tokens")
_NODE_EVENT_TAG = _tag(NODE_EXECUTION, "event")
_STARTED = NODE_EVENT.number(NodeEvent.STARTED)
# Types that move one counter by one: the counter's position in SessionTotals.counts().
_COUNTED = {
    CHECKPOINT.type_id: 4,
    REMOTE_PUSHED.type_id: 5,
    SESSION_ROLLED_BACK.type_id: 6,
    SESSION_CLEANED_UP.type_id: 7,
    PARALLEL_EXECUTION.type_id: 8,
    SESSION_BRANCH_CREATED.type_id: 9,
}
COUNTED_TYPE_IDS = frozenset(
    {*_COUNTED, AGENT_TURN.type_id, NODE_EXECUTION.type_id, PIPELINE_LIFECYCLE.type_id}
)
"""The types whose turns change the totals (a store may skip decoding any other turn's data)."""


def totals_after(totals: SessionTotals, turn_id: str, type_id: str, data: Mapping[int, Any]) -> SessionTotals:
    """The totals of a turn appended on top of the turn whose totals are `totals`."""
    if type_id not in COUNTED_TYPE_IDS:
        return totals
    counts = list(totals.counts())
    lifecycle = totals.lifecycle_turn_id
    if type_id == AGENT_TURN.type_id:
        counts[0] += 1
        usage = data.get(_TOKENS_TAG)
        tokens = TokenUsage()
        if isinstance(usage, Mapping):
            tokens = TokenUsage(_count(usage.get(_PROMPT_TAG)), _count(usage.get(_COMPLETION_TAG)))
            counts[1] += tokens.prompt_tokens
            counts[2] += tokens.completion_tokens
        cost = recorded_cost(_dollars(data.get(_COST_TAG)), tokens)
        if cost is None:
            counts[11] += 1
        else:
            counts[10] += cost.nanos
    elif type_id == NODE_EXECUTION.type_id:
        if data.get(_NODE_EVENT_TAG) != _STARTED:
            return totals
        counts[3] += 1
    elif type_id == PIPELINE_LIFECYCLE.type_id:
        lifecycle = turn_id
    else:
        counts[_COUNTED[type_id]] += 1
    return SessionTotals.of(counts, lifecycle)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _dollars(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
