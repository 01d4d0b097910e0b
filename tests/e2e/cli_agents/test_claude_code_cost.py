"""The real `claude` binary against the fake Anthropic API, with usage that includes cache reads and writes: each
turn is priced from its tokens as it lands (so budgets act between turns), and the node's turns add up to Claude
Code's own `total_cost_usd` (its result line), which Orchestra takes where the agent reports it."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

import pytest

from orchestra_core.model.money import Money
from orchestra_core.model.pricing import ModelPrice
from tests.e2e.cli_agents.conftest import AgentProject
from tests.support.fake_provider_api import FakeAnthropicAPI, Reply, ToolUse
from tests.support.orchestra_project import agent_turns, run_json

MODEL = "claude-sonnet-4-5-20250929"
LIST = {"input": "3", "output": "15", "cache_read": "0.3", "cache_write": "3.75"}  # what Claude Code charges
TENTH = {"input": "0.3", "output": "1.5", "cache_read": "0.03", "cache_write": "0.375"}  # orchestra.yaml's price
FIRST = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 300}
LAST = {"input_tokens": 400, "output_tokens": 50, "cache_read_input_tokens": 6000, "cache_creation_input_tokens": 0}


def _dollars(usage: dict[str, int], price: dict[str, str]) -> Decimal:
    return (
        usage["input_tokens"] * Decimal(price["input"]) + usage["output_tokens"] * Decimal(price["output"])
        + usage["cache_read_input_tokens"] * Decimal(price["cache_read"])
        + usage["cache_creation_input_tokens"] * Decimal(price["cache_write"])
    ) / 10**6  # fmt: skip


def test_claude_codes_own_total_cost_settles_its_node_and_cache_tokens_are_recorded_apart(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    pricing = {"claude-sonnet-4-5": {key: float(value) for key, value in TENTH.items()}}
    project.configure({"model": MODEL}, extra={"pricing": pricing})
    script = [
        Reply("Writing.", [ToolUse("mcp__orchestra__project__write-file", {"path": "a.py", "content": "A = 1\n"})], usage=FIRST),
        Reply("Done.", usage=LAST),
    ]
    with FakeAnthropicAPI(script) as api:
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    session = json.loads(result.stdout)["session_id"]

    first, last = (turn for _, turn in agent_turns(project.root, session))
    assert first.model == MODEL and first.token_usage.cache_read_tokens == 5000
    assert first.token_usage.cache_write_tokens == 300 and first.token_usage.prompt_tokens == 6300  # cached included
    # the first turn is priced from its tokens at orchestra.yaml's price, as soon as it lands (Claude Code prints a
    # response before its final output count: the tokens it showed then)
    assert Money.usd(first.cost_usd) == ModelPrice(**TENTH).cost(first.token_usage)
    # Claude Code's result line reports what it charged at list prices: the last turn settles the node to it
    claude_total = _dollars(FIRST, LIST) + _dollars(LAST, LIST)
    assert Decimal(repr(first.cost_usd)) + Decimal(repr(last.cost_usd)) == pytest.approx(claude_total, abs=Decimal("1e-9"))
    document = run_json("status", session, cwd=project.root)
    [node] = [node for node in document["nodes"] if node["id"] == "implement"]
    assert node["cost_usd"] == pytest.approx(float(claude_total)) and document["cost_complete"]
