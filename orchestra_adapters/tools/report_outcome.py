"""The built-in `report_outcome` tool: how an agent hands the engine an explicit Outcome."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import evolve

from orchestra_core.model.outcome import Outcome, StageStatus

REPORT_OUTCOME = "report_outcome"

REPORT_OUTCOME_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": ["success", "partial_success", "retry", "fail"],
            "description": "How the stage went.",
        },
        "preferred_label": {"type": "string", "description": "Label of the outgoing edge to take next."},
        "suggested_next_ids": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Ids of the nodes to go to next, best first.",
        },
        "notes": {
            "type": "string",
            "description": "A short explanation (the failure reason for fail/retry).",
        },
        "context_updates": {"type": "object", "description": "Values to set in the pipeline context."},
    },
    "required": ["status"],
}

REPORT_OUTCOME_DESCRIPTION = (
    "Report this stage's outcome to the pipeline. Call it when the outcome is not plain success, or to "
    "choose where the pipeline goes next. The stage ends after the turn in which you call it."
)


def outcome_from_report(args: Mapping[str, Any]) -> Outcome:
    """The Outcome a `report_outcome` call describes.

    Raises:
        ValueError: The arguments do not describe a valid outcome (the message is shown to the model).
    """
    document = {"outcome": args.get("status"), **{k: v for k, v in args.items() if k != "status"}}
    if not isinstance(document["outcome"], str):
        raise ValueError("status is required: one of success, partial_success, retry, fail")
    try:
        outcome = Outcome.from_status_json(document)
    except ValueError as error:
        raise ValueError(str(error)) from None
    if outcome.status == StageStatus.SKIPPED:
        raise ValueError("status must be one of success, partial_success, retry, fail")
    if outcome.status in (StageStatus.FAIL, StageStatus.RETRY) and not outcome.failure_reason:
        return evolve(outcome, failure_reason=outcome.notes or f"the agent reported {outcome.status.value}")
    return outcome
