"""The seed's adversarial PR review pipeline: stylesheet + agents + aliases resolve, and it compiles cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_adapters.config.prompt_files import prompt_library_for
from orchestra_core.agents.lint import agent_lint_rules
from orchestra_core.agents.resolver import AgentResolver
from orchestra_core.agents.toolset import create_registry
from orchestra_core.graph.dot_loader import parse_dot
from orchestra_core.model.context import Context
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.validation import LintRule, Severity

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
PIPELINE = """\
digraph pr_review {
    graph [
        goal="Review the pull request from multiple perspectives and produce a synthesized review",
        label="Adversarial PR Review",
        model_spec="
            * { llm_model: smart; llm_provider: anthropic; }
            .critic { llm_model: worker; llm_provider: openrouter; }
            #synthesizer { llm_model: smart; }
        "
    ]
    node [shape=box, timeout="900s"]
    start [shape=Mdiamond, label="Start"]
    exit  [shape=Msquare, label="Exit"]
    security_reviewer [label="Security Review", agent="security-reviewer", goal_gate=true]
    architecture_reviewer [label="Architecture Review", agent="architecture-reviewer", goal_gate=true]
    fan_out [shape=component, label="Fan Out"]
    fan_in [shape=tripleoctagon, label="Collect Reviews"]
    critic [label="Adversarial Critique", class="critic", agent.role="adversarial-critic",
            agent.persona="devils-advocate", agent.personality="contrarian-precise",
            agent.task="critique-reviews", max_retries=2]
    gate [shape=diamond, label="Critique Sufficient?"]
    synthesizer [label="Synthesize Review", agent="synthesizer", agent.mode="interactive"]
    pinned [label="Pinned", prompt="Summarize", llm_model="gpt-4o", llm_provider="openai"]
    start -> fan_out
    fan_out -> security_reviewer
    fan_out -> architecture_reviewer
    security_reviewer -> fan_in
    architecture_reviewer -> fan_in
    fan_in -> critic
    critic -> gate
    gate -> fan_out [label="Retry", condition="outcome!=success", weight=0]
    gate -> synthesizer [label="Proceed", condition="outcome=success", weight=1]
    synthesizer -> pinned -> exit
}
"""
CONFIG = """\
providers:
  default: anthropic
  anthropic:
    models: {smart: claude-opus-4-20250514, worker: claude-sonnet-4-20250514, cheap: claude-haiku-3-20250514}
  openai:
    models: {smart: gpt-4o, worker: gpt-4o-mini, cheap: gpt-4o-mini}
  openrouter:
    models: {smart: anthropic/claude-opus-4, worker: anthropic/claude-sonnet-4, cheap: meta-llama/llama-3.1-70b}
    api_base: https://openrouter.ai/api/v1
workspace:
  repos:
    backend: {path: ../backend}
    frontend: {path: ../frontend}
  tools:
    backend:
      run-tests: {command: "docker compose exec app bundle exec rspec"}
agents:
  security-reviewer:
    role: security-engineer
    persona: senior-security-engineer
    personality: thorough-skeptical
    task: review-pr-security
    model: cheap
    tools: [backend:read-file, backend:search-code, backend:run-tests, frontend:read-file, frontend:search-code]
  architecture-reviewer:
    role: software-architect
    persona: principal-engineer
    personality: pragmatic-opinionated
    task: review-pr-architecture
  synthesizer:
    role: review-synthesizer
    persona: tech-lead
    personality: balanced-decisive
    task: synthesize-review
    provider: openai
    tools: []
"""


# What the critic and the synthesizer read: the diff and the reviews the fan-in collected.
REVIEWED = {"pr_diff": "diff", "parallel.results": [{"id": "security_reviewer", "status": "success", "notes": "ok"}]}


@pytest.fixture
def project(tmp_path: Path) -> tuple[AgentResolver, list[LintRule]]:
    config = tmp_path / "orchestra.yaml"
    config.write_text(f"{CONFIG}prompts: ['{EXAMPLES / 'pr-review' / 'prompts'}']\n", encoding="utf-8")
    settings = load_settings(config)
    library = prompt_library_for(settings, tmp_path / "pr_review.dot")
    registry = create_registry(settings)
    return AgentResolver(settings, library, registry), agent_lint_rules(settings, library, registry)


def test_seed_pipeline_compiles_without_agent_errors(project: tuple[AgentResolver, list[LintRule]]) -> None:
    _, rules = project
    prepared = prepare_pipeline(parse_dot(PIPELINE, "pr_review.dot"), extra_rules=rules)
    agent_rules = {rule.name for rule in rules}
    problems = [d for d in prepared.diagnostics if d.rule in agent_rules and d.severity is not Severity.INFO]
    assert problems == []
    notes = {d.node_id: d.message for d in prepared.diagnostics if d.rule == "task_variables"}
    assert set(notes) == {"security_reviewer", "architecture_reviewer", "critic", "synthesizer"}
    assert "pr_diff" in notes["security_reviewer"]


@pytest.mark.parametrize(
    ("node_id", "provider", "model"),
    [
        # universal rule (smart, anthropic) outranks the agent's `model: cheap`
        ("security_reviewer", "anthropic", "claude-opus-4-20250514"),
        ("architecture_reviewer", "anthropic", "claude-opus-4-20250514"),
        # class rule outranks the universal one
        ("critic", "openrouter", "anthropic/claude-sonnet-4"),
        # id rule sets the model; the provider still comes from the universal rule, over the agent's openai
        ("synthesizer", "anthropic", "claude-opus-4-20250514"),
        # explicit node attributes outrank every rule
        ("pinned", "openai", "gpt-4o"),
    ],
)
def test_stylesheet_specificity_then_aliases(
    project: tuple[AgentResolver, list[LintRule]], node_id: str, provider: str, model: str
) -> None:
    resolver, _ = project
    graph = prepare_pipeline(parse_dot(PIPELINE, "pr_review.dot")).graph
    agent = resolver.resolve(graph.nodes[node_id], Context(REVIEWED), graph)
    assert (agent.provider, agent.model) == (provider, model)


def test_without_a_stylesheet_the_agent_and_the_default_decide(project: tuple[AgentResolver, list[LintRule]]) -> None:
    resolver, _ = project
    plain = PIPELINE.replace('model_spec="', 'unused="')
    graph = prepare_pipeline(parse_dot(plain, "pr_review.dot")).graph
    context = Context(REVIEWED)
    resolved = {node: resolver.resolve(graph.nodes[node], context, graph) for node in ("security_reviewer", "synthesizer", "critic")}
    assert (resolved["security_reviewer"].provider, resolved["security_reviewer"].model) == ("anthropic", "claude-haiku-3-20250514")
    assert (resolved["synthesizer"].provider, resolved["synthesizer"].model) == ("openai", "gpt-4o-mini")
    assert (resolved["critic"].provider, resolved["critic"].model) == ("anthropic", "claude-sonnet-4-20250514")
    assert resolved["synthesizer"].mode == "interactive"
    assert resolved["synthesizer"].tool_names[:2] == ("backend:read-file", "backend:write-file")
