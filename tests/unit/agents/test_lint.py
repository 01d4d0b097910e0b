"""Compile-time agent diagnostics: every resolution problem is reported on its node."""

from __future__ import annotations

import pytest

from orchestra_core.agents.lint import agent_lint_rules
from orchestra_core.agents.toolset import create_registry
from orchestra_core.model.graph import Edge, Graph, Node
from orchestra_core.model.settings import (
    AgentSettings,
    OrchestraSettings,
    ProviderSettings,
    ProvidersSettings,
)
from orchestra_core.testing.prompt_library import InMemoryPromptLibrary
from orchestra_core.validation import Diagnostic, LintRule, Severity, validate

SETTINGS = OrchestraSettings(
    providers=ProvidersSettings(default="anthropic", entries={"anthropic": ProviderSettings(models={"worker": "sonnet"})}),
    agents={"coder": AgentSettings(role="engineer", task="fix"), "ghostly": AgentSettings(role="ghost")},
)


@pytest.fixture
def rules() -> list[LintRule]:
    library = InMemoryPromptLibrary().add_role("engineer", "Engineer.").add_task("fix", "Fix {{ bug }} for {{ goal }}.")
    library.add_task("broken", "{% if %}")
    return agent_lint_rules(SETTINGS, library, create_registry(SETTINGS))


def diagnose(rules: list[LintRule], *nodes: Node) -> list[Diagnostic]:
    graph = Graph("g", {}, {node.id: node for node in nodes})
    return [diagnostic for rule in rules for diagnostic in rule.apply(graph)]


def test_rules_are_lint_rules(rules: list[LintRule]) -> None:
    assert [rule.name for rule in rules] == [
        "agent_reference", "prompt_layers", "model_resolution", "agent_tools", "agent_mode", "task_variables",
    ]
    assert all(isinstance(rule, LintRule) for rule in rules)


def test_a_resolvable_node_only_gets_the_task_variables_note(rules: list[LintRule]) -> None:
    (note,) = diagnose(rules, Node("fix_bug", {"agent": "coder"}))
    assert (note.rule, note.severity, note.node_id) == ("task_variables", Severity.INFO, "fix_bug")
    assert (note.location, note.message) == ("node fix_bug", "task 'fix' uses context value(s) bug")
    assert note.fix.startswith("pass them with --set (e.g. --set bug=...)")


@pytest.mark.parametrize(
    ("attrs", "rule", "fragment"),
    [
        ({"agent": "codr"}, "agent_reference", "no agent named 'codr' in orchestra.yaml (did you mean coder?)"),
        ({"agent": "ghostly"}, "prompt_layers", "no role named 'ghost'"),
        ({"agent.task": "missing"}, "prompt_layers", "no task named 'missing'"),
        ({"agent.task": "broken"}, "prompt_layers", "task template syntax error"),
        ({"prompt": "x", "llm_model": "smart"}, "model_resolution", "model alias 'smart' is not configured for provider 'anthropic'"),
        ({"prompt": "x", "agent.tools": "backend:run-tests"}, "agent_tools", "unknown tool(s): backend:run-tests"),
        ({"prompt": "x", "agent.disallowed_tools": "web:*"}, "agent_tools", "unknown tool(s): web:*"),
        ({"prompt": "x", "agent.mode": "chat"}, "agent_mode", "agent.mode must be one of autonomous, interactive"),
    ],
)
def test_each_problem_is_an_error_on_its_node(rules: list[LintRule], attrs: dict[str, str], rule: str, fragment: str) -> None:
    diagnostics = [d for d in diagnose(rules, Node("stage", attrs)) if d.severity is Severity.ERROR]
    assert [d.rule for d in diagnostics] == [rule]
    assert diagnostics[0].node_id == "stage"
    assert diagnostics[0].location == "node stage" and not diagnostics[0].message.startswith("node stage")
    assert fragment in diagnostics[0].message
    assert diagnostics[0].fix


def test_only_codergen_nodes_are_checked(rules: list[LintRule]) -> None:
    nodes = [
        Node("start", {"shape": "Mdiamond", "agent": "nobody"}),
        Node("gate", {"shape": "diamond", "agent.mode": "chat"}),
        Node("tool", {"shape": "parallelogram", "llm_model": "smart"}),
    ]
    assert diagnose(rules, *nodes) == []


def test_without_any_provider_models_are_not_checked() -> None:
    # Nothing configured: LLM stages can only be simulated, so a missing provider is no error.
    bare = OrchestraSettings()
    rule = agent_lint_rules(bare, InMemoryPromptLibrary(), create_registry(bare))[2]
    assert list(rule.apply(Graph("g", {}, {"a": Node("a", {"prompt": "x"})}))) == []


def test_no_provider_chosen_among_several() -> None:
    providers = ProvidersSettings(
        entries={"a": ProviderSettings(models={"worker": "m1"}), "b": ProviderSettings(models={"worker": "m2"})}
    )
    settings = OrchestraSettings(providers=providers)
    rule = agent_lint_rules(settings, InMemoryPromptLibrary(), create_registry(settings))[2]
    (diagnostic,) = rule.apply(Graph("g", {}, {"a": Node("a", {"prompt": "x"})}))
    assert diagnostic.rule == "model_resolution"
    assert "set providers.default" in diagnostic.message


def test_they_plug_into_validate(rules: list[LintRule]) -> None:
    graph = Graph(
        "g",
        {"goal": "x"},
        {"start": Node("start", {"shape": "Mdiamond"}), "work": Node("work", {"agent": "codr"}), "exit": Node("exit", {"shape": "Msquare"})},
    )
    graph = graph.evolve(edges=[Edge("start", "work"), Edge("work", "exit")])
    found = [d for d in validate(graph, extra_rules=rules) if d.rule == "agent_reference"]
    assert [d.node_id for d in found] == ["work"]
