"""AgentResolver: what a codergen node's agent is (prompt, model, provider, tools, mode)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from attrs import field, frozen

from orchestra_core.agents.models import ModelChoice, ModelRequest, ModelResolver
from orchestra_core.agents.prompts import ComposedPrompt, LayerChoice, PromptLayers, compose, load_layers
from orchestra_core.agents.registry import ToolRegistry
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.templates import template_variables
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.agents.toolset import DEFAULT_BASE_TOOLS, build_tools, select_tools
from orchestra_core.model.context import Context
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.immutable import str_tuple
from orchestra_core.model.settings import AGENT_MODES, AgentSettings, OrchestraSettings
from orchestra_core.model.values import parse_list
from orchestra_core.ports.prompt_library import PromptLibrary

DEFAULT_MODE = "autonomous"

T = TypeVar("T")


class AgentConfigError(OrchestraError):
    """A node names an unknown agent or an invalid agent setting."""


@frozen
class ResolvedAgent:
    """Everything a backend needs to run a node's agent.

    Attributes:
        node_id: The node.
        agent_name: The orchestra.yaml agent the node references ("" for inline layers only).
        provider: Resolved provider key.
        model: Resolved model identifier (aliases resolved).
        tool_names: Qualified tool names (`backend:read-file`, cross-repo names), in offer order.
        mode: `autonomous` or `interactive`.
        system_prompt: Role, persona and personality text.
        task_prompt: Rendered task template and the node's prompt.
        prompt: The composed prompt the backend receives and prompt.md records.
        model_choice: How the model and provider were chosen.
        layers: Labels of the layers used (`role security-engineer (prompts/roles/...)`).
    """

    node_id: str
    agent_name: str
    provider: str
    model: str
    tool_names: tuple[str, ...] = field(converter=str_tuple)
    mode: str
    system_prompt: str
    task_prompt: str
    prompt: str
    model_choice: ModelChoice | None = None
    layers: tuple[str, ...] = field(default=(), converter=str_tuple)


_NO_AGENT = AgentSettings()  # frozen: one instance serves every node without an `agent`

class AgentResolver:
    """Resolves nodes against orchestra.yaml, the prompt library and the tool registry."""

    def __init__(
        self,
        settings: OrchestraSettings,
        library: PromptLibrary,
        registry: ToolRegistry,
        *,
        base_tools: Sequence[str] = DEFAULT_BASE_TOOLS,
    ) -> None:
        self.settings = settings
        self.library = library
        self.registry = registry
        self.models = ModelResolver(settings.providers)
        self.base_tools = tuple(base_tools)

    def resolve(self, node: Node, context: Context, graph: Graph | None = None, preamble: str = "") -> ResolvedAgent:
        """Resolve a node's agent and compose its prompt from the run's context.

        Args:
            node: The node (after transforms, so `llm_model`/`llm_provider` include the stylesheet's).
            context: The run context; its values are the task template's variables.
            graph: The pipeline, for graph-level defaults (else read from `graph.*` context keys).
            preamble: The fidelity preamble the engine adds after the prompt.

        Raises:
            OrchestraError: Unknown agent, missing prompt layer, unrenderable template, unresolvable
                model or unknown tool; the message names the node.
        """
        values = context.snapshot()
        agent_name, _ = self.agent_for(node)
        layers, composed = self._compose(node, values, graph, preamble)
        choice = self.model_for(node, graph, values)
        return ResolvedAgent(
            node_id=node.id,
            agent_name=agent_name,
            provider=choice.provider,
            model=choice.model,
            tool_names=self.tool_names_for(node),
            mode=self.mode_for(node),
            system_prompt=composed.system_prompt,
            task_prompt=composed.task_prompt,
            prompt=composed.prompt,
            model_choice=choice,
            layers=[layer.label for layer in layers.used()],
        )

    def compose_prompt(self, node: Node, context: Context, graph: Graph | None = None, preamble: str = "") -> str:
        """Only the composed prompt (no model or tool resolution: the simulation backend needs no provider).

        Raises:
            OrchestraError: Unknown agent, missing prompt layer or unrenderable template; names the node.
        """
        return self._compose(node, context.snapshot(), graph, preamble)[1].prompt

    def _compose(
        self, node: Node, values: Mapping[str, Any], graph: Graph | None, preamble: str
    ) -> tuple[PromptLayers, ComposedPrompt]:
        layers = _wrap(node, lambda: self.layers_for(node))
        variables = template_variables(values, goal=_graph_value(graph, values, "goal"), node=_node_info(node))
        node_prompt = node.prompt or ("" if layers.used() else node.label)
        return layers, _wrap(node, lambda: compose(layers, variables, node_prompt, preamble))

    def tools(self, agent: ResolvedAgent, repos: Mapping[str, RepoContext], tracker: WriteTracker) -> list[AgentTool]:
        """The agent's tools bound to the run's repos and the turn's WriteTracker."""
        return build_tools(self.registry, agent.tool_names, repos, tracker)

    def agent_for(self, node: Node) -> tuple[str, AgentSettings]:
        """The orchestra.yaml agent the node references (empty settings when it references none).

        Raises:
            AgentConfigError: The node names an agent orchestra.yaml does not define.
        """
        name = node.agent
        if not name:
            return "", _NO_AGENT
        agent = self.settings.agents.get(name)
        if agent is None:
            known = list(self.settings.agents)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]}?" if close else f"defined: {', '.join(known) or 'none'}"
            raise AgentConfigError(f"node {node.id}: no agent named {name!r} in orchestra.yaml ({hint})")
        return name, agent

    def layer_choice(self, node: Node) -> LayerChoice:
        """The layer names for the node: each `agent.<layer>` attribute overrides the agent's setting."""
        _, agent = self.agent_for(node)
        return LayerChoice(
            role=node.agent_role or agent.role or "",
            persona=node.agent_persona or agent.persona or "",
            personality=node.agent_personality or agent.personality or "",
            task=node.agent_task or agent.task or "",
            role_from_node=bool(node.agent_role),
            persona_from_node=bool(node.agent_persona),
        )

    def layers_for(self, node: Node) -> PromptLayers:
        """Load the node's prompt layers (raises PromptLayerError / ConfigError)."""
        return load_layers(self.library, self.layer_choice(node), f"node {node.id}")

    def model_for(self, node: Node, graph: Graph | None = None, values: Mapping[str, Any] | None = None) -> ModelChoice:
        """The node's model and provider by precedence (raises ModelResolutionError naming the node)."""
        _, agent = self.agent_for(node)
        request = ModelRequest(
            node_model=node.llm_model,
            node_provider=node.llm_provider,
            agent_model=agent.model or "",
            agent_provider=agent.provider or "",
            graph_model=_graph_value(graph, values or {}, "llm_model"),
            graph_provider=_graph_value(graph, values or {}, "llm_provider"),
        )
        return _wrap(node, lambda: self.models.choose(request))

    def tool_names_for(self, node: Node) -> tuple[str, ...]:
        """Base set + additions (`agent.tools` attribute, else the agent's `tools`) - restrictions."""
        _, agent = self.agent_for(node)
        additions = node.agent_tools if "agent.tools" in node.attrs else agent.tools
        restrictions = (
            parse_list(node.attrs["agent.disallowed_tools"])
            if "agent.disallowed_tools" in node.attrs
            else agent.disallowed_tools
        )
        available = self.registry.names(self.settings.workspace.repo_names())
        return _wrap(node, lambda: select_tools(available, self.base_tools, additions, restrictions))

    def mode_for(self, node: Node) -> str:
        """`agent.mode` of the node, else of the agent, else autonomous (raises AgentConfigError if invalid)."""
        _, agent = self.agent_for(node)
        mode = node.attrs.get("agent.mode") or agent.mode or DEFAULT_MODE
        if mode not in AGENT_MODES:
            raise AgentConfigError(f"node {node.id}: agent.mode must be one of {', '.join(AGENT_MODES)}, got {mode!r}")
        return mode


def _graph_value(graph: Graph | None, values: Mapping[str, Any], key: str) -> str:
    if graph is not None and graph.attrs.get(key):
        return graph.attrs[key]
    value = values.get(f"graph.{key}")
    return "" if value is None else str(value)


def _node_info(node: Node) -> dict[str, Any]:
    return {"id": node.id, "label": node.label, "attrs": dict(node.attrs)}


def _wrap(node: Node, action: Callable[[], T]) -> T:
    """Run `action`; an OrchestraError that does not name the node is re-raised naming it."""
    try:
        return action()
    except OrchestraError as error:
        if str(error).startswith(f"node {node.id}:"):
            raise
        raise AgentConfigError(f"node {node.id}: {error}") from error
