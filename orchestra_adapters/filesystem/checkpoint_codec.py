"""checkpoint.json and manifest.json: JSON forms of Checkpoint and RunManifest, with pinned key names.

`node_outcomes` is `{node: {"status", "notes", ...}}` as DESIGN.md specifies (the form other Attractor
runners write): each outcome's status and notes, plus its preferred label, suggested ids and failure reason
when it has them. Context updates are not repeated there: they are already part of `context`. Format 1
files (`{node: status}` with the rest under `outcome_details`) are still read, so older runs resume.

Encoding is incremental: a CheckpointEncoder remembers the fragments of the previous checkpoint and
re-encodes only what changed (one node's outcome, the new completed nodes), so writing a checkpoint
costs little more than joining strings, even thousands of nodes into a run. Hand-written rather than
a cattrs converter because this is the engine's hot path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from orchestra_core.model.checkpoint import Checkpoint, OutcomeMap, RunManifest, RunStatus
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.run_directory import RunDirectoryError

FORMAT_VERSION = 2


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":"))
_dumps = _ENCODER.encode


def _outcome_document(outcome: Outcome) -> dict[str, Any]:
    document: dict[str, Any] = {"status": outcome.status.value, "notes": outcome.notes}
    if outcome.preferred_label:
        document["preferred_label"] = outcome.preferred_label
    if outcome.suggested_next_ids:
        document["suggested_next_ids"] = list(outcome.suggested_next_ids)
    if outcome.failure_reason:
        document["failure_reason"] = outcome.failure_reason
    return document


class _Fragments:
    """Keyed JSON fragments in insertion order, with their comma-joined text kept up to date: adding a key
    appends to the text, changing one marks it for a re-join."""

    def __init__(self) -> None:
        self._items: dict[str, str] = {}
        self._text = ""
        self._stale = False

    def put(self, key: str, fragment: str) -> None:
        if key not in self._items:
            self._items[key] = fragment
            if not self._stale:
                self._text = f"{self._text},{fragment}" if self._text else fragment
        elif self._items[key] != fragment:
            self._items[key] = fragment
            self._stale = True

    @property
    def text(self) -> str:
        if self._stale:
            self._text = ",".join(self._items.values())
            self._stale = False
        return self._text


class CheckpointEncoder:
    """Encodes successive checkpoints of one run, reusing the fragments of the previous one."""

    def __init__(self) -> None:
        self._outcomes: OutcomeMap | None = None
        self._outcome_text = _Fragments()
        self._completed_source: tuple[str, ...] = ()
        self._completed_text = ""

    def encode(self, checkpoint: Checkpoint) -> str:
        """The checkpoint.json text."""
        self._sync_outcomes(checkpoint.node_outcomes)
        self._sync_completed(checkpoint.completed_nodes)
        head = {
            "format": FORMAT_VERSION,
            "timestamp": checkpoint.timestamp.isoformat(),
            "status": checkpoint.status.value,
            "current_node": checkpoint.current_node,
            "next_node": checkpoint.next_node,
            "failure_reason": checkpoint.failure_reason,
            "node_visits": checkpoint.node_visits,
            "loop_restarts": checkpoint.loop_restarts,
            "node_retries": dict(checkpoint.node_retries),
            "workspace_snapshot": dict(checkpoint.workspace_snapshot),
        }
        return "".join(
            (
                _dumps(head)[:-1],
                ',"completed_nodes":[',
                self._completed_text,
                '],"node_outcomes":{',
                self._outcome_text.text,
                '},"context":',
                _dumps(dict(checkpoint.context)),
                ',"logs":',
                _dumps(list(checkpoint.logs)),
                "}\n",
            )
        )

    def _sync_outcomes(self, outcomes: OutcomeMap) -> None:
        changed = outcomes.changes_since(self._outcomes) if self._outcomes is not None else None
        if changed is None:
            self._rebuild_outcomes(outcomes)
            return
        for node_id in dict.fromkeys(changed):
            self._put(node_id, outcomes[node_id])
        self._outcomes = outcomes

    def _rebuild_outcomes(self, outcomes: OutcomeMap) -> None:
        self._outcome_text = _Fragments()
        for node_id, outcome in outcomes.items():
            self._put(node_id, outcome)
        self._outcomes = outcomes

    def _put(self, node_id: str, outcome: Outcome) -> None:
        self._outcome_text.put(node_id, f"{_dumps(node_id)}:{_dumps(_outcome_document(outcome))}")

    def _sync_completed(self, completed: tuple[str, ...]) -> None:
        known = len(self._completed_source)
        if len(completed) >= known and completed[:known] == self._completed_source:
            added = ",".join(_dumps(node_id) for node_id in completed[known:])
            if added:
                self._completed_text = f"{self._completed_text},{added}" if self._completed_text else added
        else:
            self._completed_text = ",".join(_dumps(node_id) for node_id in completed)
        self._completed_source = completed


def decode_checkpoint(text: str, source: str) -> Checkpoint:
    """Read checkpoint.json text.

    Raises:
        RunDirectoryError: The text is not a checkpoint; the message names `source` and the problem.
    """
    document = _load_object(text, source)
    try:
        statuses = _mapping(document, "node_outcomes")
        details = _mapping(document, "outcome_details", required=False)  # format 1
        outcomes = OutcomeMap(
            {node_id: _outcome(entry, details.get(node_id) or {}) for node_id, entry in statuses.items()}
        )
        return Checkpoint(
            current_node=_string(document, "current_node"),
            completed_nodes=tuple(_string_list(document, "completed_nodes")),
            node_outcomes=outcomes,
            node_retries={str(k): int(v) for k, v in _mapping(document, "node_retries", required=False).items()},
            context=_mapping(document, "context"),
            timestamp=datetime.fromisoformat(_string(document, "timestamp")),
            next_node=document.get("next_node"),
            status=RunStatus(document.get("status", "running")),
            failure_reason=str(document.get("failure_reason") or ""),
            logs=tuple(_string_list(document, "logs", required=False)),
            workspace_snapshot={str(k): str(v) for k, v in _mapping(document, "workspace_snapshot", required=False).items()},
            node_visits=int(document.get("node_visits", len(statuses))),
            loop_restarts=int(document.get("loop_restarts", 0)),
        )
    except KeyError as error:
        raise RunDirectoryError(f"{source}: not a valid checkpoint: missing key {error}") from None
    except (TypeError, ValueError) as error:
        raise RunDirectoryError(f"{source}: not a valid checkpoint: {error}") from None


def _outcome(entry: Any, details: Mapping[str, Any]) -> Outcome:
    """An outcome from its `node_outcomes` entry: an object (format 2) or a status string whose other fields
    are in `outcome_details` (format 1)."""
    if isinstance(entry, dict):
        details, status = entry, entry.get("status")
    else:
        status = entry
    if not isinstance(status, str):
        raise ValueError(f"outcome status {status!r} is not a string")
    return Outcome(
        StageStatus.parse(status),
        preferred_label=str(details.get("preferred_label") or ""),
        suggested_next_ids=tuple(str(s) for s in details.get("suggested_next_ids") or ()),
        notes=str(details.get("notes") or ""),
        failure_reason=str(details.get("failure_reason") or ""),
    )


def encode_manifest(manifest: RunManifest) -> str:
    """The manifest.json text."""
    document = {
        "format": FORMAT_VERSION,
        "name": manifest.pipeline,
        "goal": manifest.goal,
        "label": manifest.label,
        "start_time": manifest.started_at.isoformat(),
        "session_id": manifest.session_id,
        "source_path": manifest.source_path,
        "logs_root": manifest.logs_root,
        "initial_context": dict(manifest.initial_context),
        "resumed_at": [moment.isoformat() for moment in manifest.resumed_at],
    }
    return json.dumps(document, ensure_ascii=False, default=str, indent=2) + "\n"


def decode_manifest(text: str, source: str) -> RunManifest:
    """Read manifest.json text (format 1 files name the graph `pipeline` and the start `started_at`).

    Raises:
        RunDirectoryError: The text is not a manifest; the message names `source` and the problem.
    """
    document = _load_object(text, source)
    try:
        return RunManifest(
            session_id=_string(document, "session_id"),
            pipeline=str(document.get("name") or document.get("pipeline") or ""),
            goal=str(document.get("goal") or ""),
            label=str(document.get("label") or ""),
            source_path=document.get("source_path"),
            logs_root=str(document.get("logs_root") or ""),
            started_at=datetime.fromisoformat(_string(document, "start_time" if "start_time" in document else "started_at")),
            initial_context=_mapping(document, "initial_context", required=False),
            resumed_at=tuple(datetime.fromisoformat(m) for m in _string_list(document, "resumed_at", required=False)),
        )
    except KeyError as error:
        raise RunDirectoryError(f"{source}: not a valid run manifest: missing key {error}") from None
    except (TypeError, ValueError) as error:
        raise RunDirectoryError(f"{source}: not a valid run manifest: {error}") from None


def _load_object(text: str, source: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise RunDirectoryError(f"{source}: not valid JSON: {error}") from None
    except RecursionError:
        raise RunDirectoryError(f"{source}: not valid JSON: nested too deeply") from None
    if not isinstance(document, dict):
        raise RunDirectoryError(f"{source}: expected a JSON object")
    return document


def _string(document: Mapping[str, Any], key: str) -> str:
    value = document[key]
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string")
    return value


def _mapping(document: Mapping[str, Any], key: str, *, required: bool = True) -> dict[str, Any]:
    value = document[key] if required else document.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' must be an object")
    return value


def _string_list(document: Mapping[str, Any], key: str, *, required: bool = True) -> list[str]:
    value = document[key] if required else document.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return value
