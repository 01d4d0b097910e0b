"""Prompt snapshots: the composed prompts of the seed's PR-review agents, from examples/pr-review/prompts.

Golden files live in tests/unit/agents/snapshots/. After an intended change, regenerate them with
`ORCHESTRA_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/unit/agents/test_prompt_snapshots.py`
and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_adapters.config.prompt_files import YamlPromptLibrary
from orchestra_core.agents.resolver import AgentResolver, ResolvedAgent
from orchestra_core.agents.toolset import create_registry
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node

SNAPSHOTS = Path(__file__).parent / "snapshots"
CONFIG = """\
providers:
  default: anthropic
  anthropic:
    models: {smart: claude-opus-4-20250514, worker: claude-sonnet-4-20250514, cheap: claude-haiku-3-20250514}
  openai:
    models: {smart: gpt-4o, worker: gpt-4o-mini, cheap: gpt-4o-mini}
workspace:
  repos:
    backend: {path: ../backend}
    frontend: {path: ../frontend}
  tools:
    backend:
      run-tests: {command: "bundle exec rspec"}
agents:
  security-reviewer:
    role: security-engineer
    persona: senior-security-engineer
    personality: thorough-skeptical
    task: review-pr-security
    tools: [backend:run-tests]
    disallowed_tools: ["*:write-file", "*:edit-file"]
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
    model: smart
"""
GRAPH = Graph("pr_review", {"goal": "Review the pull request from multiple perspectives"})
DIFF = "--- a/app/login.rb\n+++ b/app/login.rb\n@@ -1 +1 @@\n-User.find_by(name: params[:name])\n+User.where(\"name = '#{params[:name]}'\")"
REVIEWS = [
    {"id": "security_reviewer", "status": "success", "notes": "### critical: SQL injection\n- Location: app/login.rb:1"},
    {"id": "architecture_reviewer", "status": "success", "notes": "No design problems."},
]

CASES = {
    "security_reviewer": (Node("security_reviewer", {"agent": "security-reviewer"}), {"pr_diff": DIFF}, ""),
    "architecture_reviewer_override": (
        Node("architecture_reviewer", {"agent": "architecture-reviewer", "agent.personality": "thorough-skeptical", "llm_model": "worker", "llm_provider": "openai"}),
        {"pr_diff": DIFF},
        "",
    ),
    "critic_inline": (
        Node(
            "critic",
            {
                "agent.role": "adversarial-critic",
                "agent.persona": "devils-advocate",
                "agent.personality": "contrarian-precise",
                "agent.task": "critique-reviews",
            },
        ),
        {"pr_diff": DIFF, "parallel.results": REVIEWS},
        "",
    ),
    "synthesizer_with_prompt_and_preamble": (
        Node("synthesizer", {"agent": "synthesizer", "agent.mode": "interactive", "prompt": "Keep it under one page."}),
        {"pr_diff": DIFF, "parallel.results": REVIEWS, "critique": "1. The injection holds."},
        "Completed stages: security_reviewer (success), architecture_reviewer (success), critic (success).",
    ),
    "plain_prompt": (Node("plan", {"prompt": "Plan how to create a hello world script"}), {}, ""),
}


def render(agent: ResolvedAgent) -> str:
    layers = ", ".join(label.split(" (")[0] for label in agent.layers) or "none"
    return (
        f"node: {agent.node_id}\nagent: {agent.agent_name or '-'}\nprovider: {agent.provider}\nmodel: {agent.model}\n"
        f"mode: {agent.mode}\ntools: {', '.join(agent.tool_names)}\nlayers: {layers}\n"
        f"----- prompt -----\n{agent.prompt}\n"
    )


@pytest.fixture(scope="module")
def resolver(tmp_path_factory: pytest.TempPathFactory, examples_dir: Path) -> AgentResolver:
    path = tmp_path_factory.mktemp("snap") / "orchestra.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    settings = load_settings(path)
    return AgentResolver(settings, YamlPromptLibrary([examples_dir / "prompts"]), create_registry(settings))


@pytest.fixture(scope="module")
def examples_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "examples" / "pr-review"


@pytest.mark.parametrize("case", list(CASES))
def test_composed_prompt_matches_snapshot(resolver: AgentResolver, case: str) -> None:
    node, values, preamble = CASES[case]
    actual = render(resolver.resolve(node, Context(values), GRAPH, preamble=preamble))
    golden = SNAPSHOTS / f"{case}.txt"
    if os.environ.get("ORCHESTRA_UPDATE_SNAPSHOTS") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert golden.exists(), f"no snapshot {golden.name}; run with ORCHESTRA_UPDATE_SNAPSHOTS=1 and review it"
    assert actual == golden.read_text(encoding="utf-8")
