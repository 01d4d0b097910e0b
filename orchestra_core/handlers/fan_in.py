"""The fan-in handler (Attractor 4.9): pick the best branch of the preceding fan-out.

With a `prompt` and a backend the LLM ranks the candidates; otherwise (or when its answer names no
candidate) the heuristic picks by status, then `score`, then id. The winner's context changes are merged
into the run context, so later stages see the chosen branch's work.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.codergen import expand_goal, failover_keyword, truncate
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.codergen_backend import CodergenBackend

_RANK = {"success": 0, "partial_success": 1, "retry": 2, "fail": 3, "skipped": 4}
_ENGINE_KEYS = frozenset({"outcome", "preferred_label", "current_node", "last_stage"})
_ENGINE_PREFIXES = ("internal.", "parallel.", "graph.")

Candidate = Mapping[str, Any]


def heuristic_select(candidates: Sequence[Candidate]) -> Candidate:
    """Best by status (success, partial, retry, fail), then highest `score`, then id."""
    return min(
        candidates,
        key=lambda c: (_RANK.get(str(c.get("status")), 5), -float(c.get("score") or 0), str(c.get("id"))),
    )


def mergeable_changes(candidate: Candidate) -> dict[str, Any]:
    """The candidate's context changes minus engine bookkeeping keys."""
    changes = candidate.get("context_updates") or {}
    return {
        key: value
        for key, value in changes.items()
        if key not in _ENGINE_KEYS and not key.startswith(_ENGINE_PREFIXES)
    }


class FanInHandler:
    """Consolidates `parallel.results`; FAILs only when there is none or every candidate failed."""

    def __init__(self, backend: CodergenBackend | None = None) -> None:
        self.backend = backend

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        results = context.get("parallel.results")
        candidates = [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []
        if not candidates:
            return Outcome.fail("No parallel results to evaluate")
        viable = [c for c in candidates if c.get("status") not in ("fail", "skipped")]
        if not viable:
            reasons = "; ".join(f"{c.get('id')}: {c.get('failure_reason') or c.get('status')}" for c in candidates)
            return Outcome.fail(f"all {len(candidates)} branches failed ({reasons})")
        best = None
        how = "heuristic"
        if node.prompt and self.backend is not None:
            best = self._llm_choice(node, context, graph, stage, candidates)
            how = "LLM ranking" if best is not None else "heuristic (the LLM named no candidate)"
        best = best or heuristic_select(viable)
        updates = {
            **mergeable_changes(best),
            "parallel.fan_in.best_id": best.get("id"),
            "parallel.fan_in.best_outcome": best.get("status"),
            "last_stage": node.id,
        }
        return Outcome.success(f"Selected best candidate: {best.get('id')} ({how})", context_updates=updates)

    def _llm_choice(
        self, node: Node, context: Context, graph: Graph, stage: StageRun, candidates: Sequence[Candidate]
    ) -> Candidate | None:
        assert self.backend is not None
        prompt = ranking_prompt(expand_goal(node.prompt, graph), candidates)
        stage.write("prompt.md", prompt)
        result = self.backend.run(node, prompt, context, **failover_keyword(self.backend, stage))
        if isinstance(result, Outcome):
            stage.write("response.md", result.notes or result.preferred_label)
            named = [result.preferred_label, *result.suggested_next_ids, result.notes]
        else:
            stage.write("response.md", str(result))
            named = [str(result)]
        by_id = {str(c.get("id")): c for c in candidates}
        for text in named:
            found = first_named_candidate(text, by_id)
            if found is not None:
                return by_id[found]
        return None


def ranking_prompt(task: str, candidates: Sequence[Candidate]) -> str:
    """The prompt asking an LLM to pick the best candidate."""
    lines = [task, "", "## Candidates"]
    for candidate in candidates:
        changes = candidate.get("context_updates") or {}
        lines.append(f"### {candidate.get('id')}")
        lines.append(f"status: {candidate.get('status')}")
        for label, value in (
            ("notes", candidate.get("notes")),
            ("failure", candidate.get("failure_reason")),
            ("last response", changes.get("last_response")),
        ):
            if value:
                lines.append(f"{label}: {truncate(str(value), 2000)}")
        lines.append("")
    lines.append("Answer with the id of the best candidate on the first line, then your reasons.")
    return "\n".join(lines)


def first_named_candidate(text: str, ids: Mapping[str, Any]) -> str | None:
    """The candidate id that appears first in the text as a whole word."""
    best: tuple[int, str] | None = None
    for candidate_id in ids:
        match = re.search(rf"(?<![\w.-]){re.escape(candidate_id)}(?![\w-])", text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), candidate_id)
    return best[1] if best else None
