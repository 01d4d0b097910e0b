"""Compile-time checks of codergen nodes' agents: references, prompt layers, models, tools, mode."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from orchestra_core.agents.registry import ToolRegistry
from orchestra_core.agents.resolver import AgentResolver
from orchestra_core.agents.templates import check_template
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.prompt_library import PromptLibrary
from orchestra_core.validation import Diagnostic, FunctionRule, LintRule, Severity

# Variables every task template has, whatever the run's context holds.
_ALWAYS_DEFINED = frozenset({"goal", "ctx", "node", "graph"})

Check = Callable[[AgentResolver, Node, Graph], Iterator[Diagnostic]]


def agent_lint_rules(settings: OrchestraSettings, library: PromptLibrary, registry: ToolRegistry) -> list[LintRule]:
    """Lint rules that resolve every codergen node's agent the way a run would.

    Rules: `agent_reference` (unknown `agent`), `prompt_layers` (missing or malformed layer files, persona
    and role conflicts, template syntax), `model_resolution` (no provider, unconfigured tier alias),
    `agent_tools` (unknown tool names), `agent_mode` (bad `agent.mode`) - all errors - and
    `task_variables` (info: the context keys a task template needs from `--set` or earlier stages).
    """
    resolver = AgentResolver(settings, library, registry)
    checks: dict[str, Check] = {
        "agent_reference": _agent_reference,
        "prompt_layers": _prompt_layers,
        "model_resolution": _model_resolution,
        "agent_tools": _agent_tools,
        "agent_mode": _agent_mode,
        "task_variables": _task_variables,
    }
    return [FunctionRule(name, _per_codergen_node(resolver, check)) for name, check in checks.items()]


def _simulation_only(resolver: AgentResolver) -> bool:
    """No provider configured at all: LLM stages can only be simulated, so models need no resolving."""
    return not resolver.settings.providers.entries


def _per_codergen_node(resolver: AgentResolver, check: Check) -> Callable[[Graph], Iterator[Diagnostic]]:
    def run(graph: Graph) -> Iterator[Diagnostic]:
        for node in graph.nodes.values():
            if node.handler_type == "codergen":
                yield from check(resolver, node, graph)

    return run


def _agent_reference(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    try:
        resolver.agent_for(node)
    except OrchestraError as error:
        yield _error("agent_reference", node, error, f"define agents.{node.agent} in orchestra.yaml or fix the name")


def _prompt_layers(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    if not _agent_known(resolver, node):
        return
    try:
        task = resolver.layers_for(node).task
        if task is not None:
            check_template(task)
    except OrchestraError as error:
        yield _error(
            "prompt_layers",
            node,
            error,
            "add the file under prompts/<roles|personas|personalities|tasks>/ next to the pipeline, in a "
            "`prompts` path of orchestra.yaml or in ~/.orchestra/prompts/, or fix the name",
        )


def _model_resolution(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    if not _agent_known(resolver, node) or _simulation_only(resolver):
        return
    try:
        resolver.model_for(node, graph)
    except OrchestraError as error:
        yield _error("model_resolution", node, error, "configure the provider and its models aliases in orchestra.yaml")


def _agent_tools(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    if not _agent_known(resolver, node):
        return
    try:
        resolver.tool_names_for(node)
    except OrchestraError as error:
        yield _error("agent_tools", node, error, "use repo:tool names of configured repos, or register the tool")


def _agent_mode(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    if not _agent_known(resolver, node):
        return
    try:
        resolver.mode_for(node)
    except OrchestraError as error:
        yield _error("agent_mode", node, error, 'set agent.mode="autonomous" or agent.mode="interactive"')


def _task_variables(resolver: AgentResolver, node: Node, graph: Graph) -> Iterator[Diagnostic]:
    if not _agent_known(resolver, node):
        return
    try:
        task = resolver.layers_for(node).task
        needed = sorted(check_template(task) - _ALWAYS_DEFINED) if task is not None else []
    except OrchestraError:
        return  # reported by prompt_layers
    if needed and task is not None:
        names = ", ".join(needed)
        yield Diagnostic(
            rule="task_variables",
            severity=Severity.INFO,
            message=f"node {node.id}: task {task.name!r} uses context value(s) {names}",
            node_id=node.id,
            fix=f"pass them with --set (e.g. --set {needed[0]}=...) or set them in an earlier stage",
        )


def _agent_known(resolver: AgentResolver, node: Node) -> bool:
    try:
        resolver.agent_for(node)
    except OrchestraError:
        return False
    return True


def _error(rule: str, node: Node, error: OrchestraError, fix: str) -> Diagnostic:
    # A leading "node X: " in the error's text is dropped by Diagnostic: the location is the node.
    return Diagnostic(rule=rule, severity=Severity.ERROR, message=str(error), node_id=node.id, fix=fix)
