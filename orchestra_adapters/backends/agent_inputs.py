"""What the LLM backends need from agent configuration: the node's model and its tools (small protocols)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node

if TYPE_CHECKING:  # the hooks import every node handler: a simulated run needs none of them from here
    from orchestra_core.agents.hooks import ToolHooks
    from orchestra_core.agents.tools import AgentTool, WriteTracker


class AgentModelChoice(Protocol):
    """The resolved provider and model of a node's agent (E1's ResolvedAgent satisfies it)."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...


class AgentResolver(Protocol):
    """Resolves a node's agent configuration (model, provider, tools) for the run's context."""

    def resolve(self, node: Node, context: Context) -> AgentModelChoice:
        """The node's resolved agent.

        Raises:
            OrchestraError: The node's agent configuration cannot be resolved.
        """
        ...


class AgentToolset(Protocol):
    """Builds the tools one node execution may call."""

    def tools_for(
        self, node: Node, agent: AgentModelChoice, context: Context, tracker: WriteTracker
    ) -> Sequence[AgentTool]:
        """The node's tools, bound to its repos; write tools record into `tracker`.

        Args:
            node: The node being executed.
            agent: What `AgentResolver.resolve` returned for it.
            context: The run's context (tool hooks and repos may depend on it).
            tracker: The write tracker the backend flushes after every turn.
        """
        ...


# Builds a node's tool call hooks (Attractor 9.7), e.g. `lambda node, context: ToolHooks.for_node(node, graph, ...)`;
# None when the node's tools run without hooks.
ToolHooksFor = Callable[[Node, Context], "ToolHooks | None"]


def requested_model(agent: AgentModelChoice) -> str:
    """The model to ask the chat model factory for: the alias the node named (its fallbacks are the alias's),
    else the resolved model."""
    choice = getattr(agent, "model_choice", None)
    requested = getattr(choice, "requested", "")
    return requested if requested and getattr(choice, "is_alias", False) else agent.model


def model_name_of(model: Any, agent: AgentModelChoice) -> str:
    """The model a chat model object asks for (`model_name` or `model`), else the agent's resolved name."""
    return str(getattr(model, "model_name", None) or getattr(model, "model", None) or agent.model)
