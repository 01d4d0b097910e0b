"""Backends by name (`simulate`, `langgraph`, `direct`) for the composition root; imports lazily."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.backends.agent_inputs import AgentResolver, AgentToolset, ToolHooksFor
from orchestra_core.model.errors import OrchestraError
from orchestra_core.ports.chat_models import ChatModelFactory
from orchestra_core.ports.codergen_backend import CodergenBackend

BACKEND_NAMES = ("simulate", "langgraph", "direct")
DEFAULT_BACKEND = "langgraph"


class UnknownBackendError(OrchestraError):
    """The configured backend name is not one Orchestra has."""


def create_backend(
    name: str,
    *,
    chat_models: ChatModelFactory,
    resolver: AgentResolver,
    toolset: AgentToolset,
    state_path: Path,
    tool_hooks: ToolHooksFor | None = None,
) -> CodergenBackend | None:
    """The backend called `name`; None for `simulate` (the engine's backend-less simulation mode).

    Args:
        name: `simulate`, `langgraph` or `direct` ("" means `langgraph`).
        chat_models: The run's chat model factory (one per run: it holds the scripted cassette's position).
        resolver: Resolves a node's agent (provider, model).
        toolset: Builds a node's tools (the LangGraph backend only).
        state_path: The LangGraph agent state database, e.g. `.orchestra/agents.db` beside the session store.
        tool_hooks: Builds a node's tool call hooks (the LangGraph backend only).

    Raises:
        UnknownBackendError: `name` is not a known backend.
    """
    chosen = name or DEFAULT_BACKEND
    if chosen == "simulate":
        return None
    if chosen == "direct":
        from orchestra_adapters.backends.direct_backend import DirectLLMBackend

        return DirectLLMBackend(chat_models, resolver)
    if chosen == "langgraph":
        from orchestra_adapters.backends.langgraph_backend import LangGraphBackend

        return LangGraphBackend(chat_models, resolver, toolset, state_path, tool_hooks=tool_hooks)
    raise UnknownBackendError(f"unknown backend {name!r}; choose one of: {', '.join(BACKEND_NAMES)}")
