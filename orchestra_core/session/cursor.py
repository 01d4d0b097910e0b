"""The per-turn session cursor every store keeps: latest checkpoint and session status, inherited from the parent.

A turn's cursor is `parent_cursor.after(turn)`. Because it is computed from the turn's actual parent, it
stays right for forks (a fork's head is an existing turn with its cursor) and for explicit-parent
appends (which inherit from the chosen parent, not from the old head). Reading a session's head turn
therefore leads straight to its latest checkpoint and its status, without a scan.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from attrs import frozen

from orchestra_core.model.records import LifecycleEvent
from orchestra_core.ports.session_store import SessionStatus, SessionTotals
from orchestra_core.session.catalog import CHECKPOINT, LIFECYCLE_EVENT, PIPELINE_LIFECYCLE
from orchestra_core.session.totals import COUNTED_TYPE_IDS, NO_TOTALS, totals_after

CHECKPOINT_TYPE_ID = CHECKPOINT.type_id
LIFECYCLE_TYPE_ID = PIPELINE_LIFECYCLE.type_id
_EVENT_TAG = next(f.tag for f in PIPELINE_LIFECYCLE.fields if f.name == "event")
_STATUS_AFTER: Mapping[Enum, SessionStatus] = {
    LifecycleEvent.STARTED: SessionStatus.RUNNING,
    LifecycleEvent.RESUMED: SessionStatus.RUNNING,
    LifecycleEvent.COMPLETED: SessionStatus.SUCCESS,
    LifecycleEvent.FAILED: SessionStatus.FAIL,
    LifecycleEvent.INTERRUPTED: SessionStatus.INTERRUPTED,
    LifecycleEvent.CANCELLED: SessionStatus.CANCELLED,
    LifecycleEvent.BUDGET_EXCEEDED: SessionStatus.BUDGET_EXCEEDED,
}

# Compact, pinned codes for stores that keep the status as a number.
STATUS_CODES = {
    SessionStatus.NEW: 0,
    SessionStatus.RUNNING: 1,
    SessionStatus.SUCCESS: 2,
    SessionStatus.FAIL: 3,
    SessionStatus.INTERRUPTED: 4,
    SessionStatus.CANCELLED: 5,
    SessionStatus.BUDGET_EXCEEDED: 6,
}
_STATUS_BY_CODE = {code: status for status, code in STATUS_CODES.items()}


def status_from_code(code: int) -> SessionStatus:
    """The status a stored code stands for (unknown codes, from a newer Orchestra, read as RUNNING)."""
    return _STATUS_BY_CODE.get(code, SessionStatus.RUNNING)


@frozen
class SessionCursor:
    """What a session looks like as of one turn.

    Attributes:
        checkpoint_turn_id: The latest Checkpoint turn at or before the turn (None: none yet).
        status: The session status after the turn.
        totals: The running totals as of the turn (kept by stores that claim `SessionTotalsReader`).
    """

    checkpoint_turn_id: str | None = None
    status: SessionStatus = SessionStatus.NEW
    totals: SessionTotals = NO_TOTALS

    def after(self, turn_id: str, type_id: str, data: Mapping[int, Any]) -> SessionCursor:
        """The cursor of a turn appended on top of the turn this cursor belongs to."""
        if type_id not in COUNTED_TYPE_IDS:
            return self
        totals = totals_after(self.totals, turn_id, type_id, data)
        checkpoint, status = self.checkpoint_turn_id, self.status
        if type_id == CHECKPOINT_TYPE_ID:
            checkpoint = turn_id
        elif type_id == LIFECYCLE_TYPE_ID:
            status = status_after_lifecycle(data, status)
        elif totals is self.totals:
            return self
        return SessionCursor(checkpoint, status, totals)


def status_after_lifecycle(data: Mapping[int, Any], current: SessionStatus) -> SessionStatus:
    """The session status a PipelineLifecycle turn's data leads to (unknown events change nothing)."""
    number = data.get(_EVENT_TAG)
    if number is None:
        return current
    try:
        event = LIFECYCLE_EVENT.member(number)
    except KeyError:
        return current
    return _STATUS_AFTER.get(event, current)
