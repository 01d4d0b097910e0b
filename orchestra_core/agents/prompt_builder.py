"""AgentPromptBuilder: the engine's PromptBuilder, composing each codergen stage's prompt from its agent."""

from __future__ import annotations

from orchestra_core.agents.resolver import AgentResolver
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.codergen import stage_preamble
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node


class AgentPromptBuilder:
    """Builds a stage's prompt: the agent's layers, the node's prompt, then the stage's fidelity preamble.

    Plug it into the codergen handler (`CodergenHandler(prompt_builder=AgentPromptBuilder(resolver))`);
    the result is what the backend receives and prompt.md records.
    """

    def __init__(self, resolver: AgentResolver) -> None:
        self.resolver = resolver

    def build(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> str:
        """The composed prompt.

        Raises:
            OrchestraError: The node's prompt cannot be composed (unknown agent, missing layer, undefined
                template variable); the message names the node. Models and tools are the backend's concern.
        """
        return self.resolver.compose_prompt(node, context, graph, preamble=stage_preamble(context, graph, stage))

