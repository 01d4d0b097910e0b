"""CodergenBackend port: runs the LLM work of a codergen node."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from orchestra_core.model.activity import OnActivity
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn

OnTurn = Callable[[AgentTurn], None]
OnFailover = Callable[[ModelFailover], None]


@runtime_checkable
class CodergenBackend(Protocol):
    """Executes an LLM task for a node (Attractor 4.5, extended with per-turn callbacks)."""

    def run(
        self,
        node: Node,
        prompt: str,
        context: Context,
        on_turn: OnTurn | None = None,
        *,
        cancel: Cancellation | None = None,
        on_failover: OnFailover | None = None,
        on_activity: OnActivity | None = None,
    ) -> str | Outcome:
        """Run the node's task.

        Args:
            node: The node with all its attributes (agent configuration included).
            prompt: The fully composed prompt.
            context: The run's shared context (read it; report changes through the Outcome).
            on_turn: Called after every agent-loop turn with that turn's data, when the backend has turns.
            cancel: Set when the attempt is given up (its node timed out). The backend then stops its work at
                once and writes nothing more: it kills the processes it started (with their process group),
                makes no further model or tool call (`raise_if_cancelled`); what it returns or raises then
                is discarded. The engine waits for `run` to return before any retry starts. Backends written
                before this keyword existed are called without it (they get no chance to stop early).
            on_failover: Called when a model call of the node went on with a fallback model (model/failover.py);
                the engine records it and shows it. A backend learns whether the attempt is the node's last one
                (an `unavailable` model fails over only then) from `is_last_attempt(context)`. Backends without
                fallbacks need not take this keyword.
            on_activity: Called with each thing the agent does as it happens, before its turn ends (an
                Activity, model/activity.py): `text` the model writes (each message, or chunks as it streams:
                the engine coalesces them), a `tool_call` before the tool runs and its `tool_result` after. It
                is shown live (the web view) and never recorded; it returns at once (observers are quick).
                Backends without live output need not take this keyword.

        Returns:
            The response text (the handler turns it into SUCCESS) or an explicit Outcome.
        """
        ...
