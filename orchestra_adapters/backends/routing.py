"""RoutingBackend: a run's backend when nodes may name their own (`implement [backend="claude-code"]`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from orchestra_core.model.activity import OnActivity
from orchestra_core.model.cancellation import Cancellation, takes_cancel, takes_keyword
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.codergen_backend import CodergenBackend, OnFailover, OnTurn

BACKEND_ATTR = "backend"
SIMULATE = "simulate"

BuildBackend = Callable[[str], CodergenBackend | None]
"""Builds the backend called `name` for this run; None means simulation."""


def node_backend(node: Node) -> str | None:
    """The backend a node names with its `backend` attribute; None when it names none."""
    value = node.attrs.get(BACKEND_ATTR)
    text = str(value).strip() if value is not None else ""
    return text or None


def simulated_response(node: Node) -> str:
    """What the codergen handler answers without a backend (the `simulate` backend)."""
    return f"[Simulated] Response for stage: {node.id}"


class RoutingBackend:
    """Runs each node with the backend its `backend` attribute names, else with the run's backend.

    Each backend is built on first use and kept for the rest of the run (one LangGraph state database,
    one cassette position, one CLI agent configuration per run); `close` closes every one built.

    Args:
        default: The run's backend name (`simulate` included).
        build: Builds a backend by name (raises for an unknown one).
    """

    def __init__(self, default: str, build: BuildBackend) -> None:
        self.default = default
        self._build = build
        self._built: dict[str, CodergenBackend | None] = {}
        self._lock = threading.Lock()

    @property
    def built(self) -> tuple[str, ...]:
        """The names of the backends built so far, in order."""
        with self._lock:
            return tuple(self._built)

    def backend_for(self, node: Node) -> CodergenBackend | None:
        """The node's backend, built now if this is its first use; None for `simulate`.

        Raises:
            UnknownBackendError: The node names a backend Orchestra does not have.
            OrchestraError: The backend cannot be built.
        """
        return self._get(node_backend(node) or self.default)

    def gives_agents_a_shell(self, node: Node) -> bool:
        """Whether the node's backend runs its agent with a shell (a CLI agent); builds the backend if needed.

        Raises:
            UnknownBackendError: The node names a backend Orchestra does not have.
            OrchestraError: It cannot be built.
        """
        asks = getattr(self.backend_for(node), "gives_agents_a_shell", None)
        return bool(asks(node)) if asks is not None else False

    def prepare(self) -> None:
        """Build the run's own backend now, so that a backend that cannot be built fails the run's start.

        Raises:
            UnknownBackendError: The run's backend is not one Orchestra has.
            OrchestraError: It cannot be built.
        """
        self._get(self.default)

    def _get(self, name: str) -> CodergenBackend | None:
        with self._lock:  # parallel branches may ask at once: build each backend once
            if name not in self._built:
                self._built[name] = None if name == SIMULATE else self._build(name)
            return self._built[name]

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
        """Run the node with its backend (the simulated response for `simulate`); `cancel`, `on_failover` and
        `on_activity` are passed on to a backend that takes them."""
        backend = self.backend_for(node)
        if backend is None:
            return simulated_response(node)
        extra: dict[str, Any] = {"cancel": cancel} if cancel is not None and takes_cancel(backend.run) else {}
        if on_failover is not None and takes_keyword(backend.run, "on_failover"):
            extra["on_failover"] = on_failover
        if on_activity is not None and takes_keyword(backend.run, "on_activity"):
            extra["on_activity"] = on_activity
        return backend.run(node, prompt, context, on_turn=on_turn, **extra)

    def close(self) -> None:
        """Close every backend built (each once, all of them even when one fails; the first error is raised)."""
        with self._lock:
            built, self._built = list(self._built.values()), {}
        failure: BaseException | None = None
        for backend in built:
            close = getattr(backend, "close", None)
            if close is None:
                continue
            try:
                close()
            except Exception as error:
                failure = failure or error
        if failure is not None:
            raise failure
