"""Outcome of a node handler (Attractor 5.2) and its status-file form (Appendix C)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple


class StageStatus(StrEnum):
    """The status a handler reports; values are the lower-case strings conditions compare with."""

    SUCCESS = "success"
    PARTIAL_SUCCESS = "partial_success"
    RETRY = "retry"
    FAIL = "fail"
    SKIPPED = "skipped"

    @classmethod
    def parse(cls, text: str) -> StageStatus:
        """Parse a status name, case-insensitively (`partial-success` and `failure` accepted).

        Raises:
            ValueError: Not a known status.
        """
        normalized = text.strip().lower().replace("-", "_")
        aliases = {"failure": "fail", "failed": "fail", "ok": "success", "partial": "partial_success"}
        return cls(aliases.get(normalized, normalized))

    @property
    def is_success(self) -> bool:
        """SUCCESS or PARTIAL_SUCCESS (what goal gates accept)."""
        return self in (StageStatus.SUCCESS, StageStatus.PARTIAL_SUCCESS)



@frozen
class Outcome:
    """The result of executing a node; drives routing and context updates."""

    status: StageStatus
    preferred_label: str = ""
    suggested_next_ids: tuple[str, ...] = field(default=(), converter=str_tuple)
    context_updates: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    notes: str = ""
    failure_reason: str = ""

    @classmethod
    def success(cls, notes: str = "", **kwargs: Any) -> Outcome:
        return cls(StageStatus.SUCCESS, notes=notes, **kwargs)

    @classmethod
    def fail(cls, reason: str, **kwargs: Any) -> Outcome:
        return cls(StageStatus.FAIL, failure_reason=reason, **kwargs)

    def to_status_json(self) -> dict[str, Any]:
        """The Appendix C status-file document."""
        document: dict[str, Any] = {
            "outcome": self.status.value,
            "preferred_label": self.preferred_label,
            "suggested_next_ids": list(self.suggested_next_ids),
            "context_updates": dict(self.context_updates),
            "notes": self.notes,
        }
        if self.failure_reason:
            document["failure_reason"] = self.failure_reason
        return document

    @classmethod
    def from_status_json(cls, document: Mapping[str, Any]) -> Outcome:
        """Read an Appendix C status-file document.

        Raises:
            ValueError: The document lacks a valid `outcome` or has fields of the wrong type.
        """
        if not isinstance(document, Mapping):
            raise ValueError("status file must hold a JSON object")
        raw_status = document.get("outcome", document.get("status"))
        if not isinstance(raw_status, str):
            raise ValueError("status file needs an 'outcome' string (success, partial_success, retry, fail)")
        suggested = document.get("suggested_next_ids") or []
        updates = document.get("context_updates") or {}
        if not isinstance(suggested, list) or not all(isinstance(s, str) for s in suggested):
            raise ValueError("'suggested_next_ids' must be a list of strings")
        if not isinstance(updates, Mapping):
            raise ValueError("'context_updates' must be an object")
        return cls(
            status=StageStatus.parse(raw_status),
            preferred_label=str(document.get("preferred_label") or ""),
            suggested_next_ids=tuple(suggested),
            context_updates=updates,
            notes=str(document.get("notes") or ""),
            failure_reason=str(document.get("failure_reason") or ""),
        )
