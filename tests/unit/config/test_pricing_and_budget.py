"""`pricing:` and `budget:` in orchestra.yaml: what they hold, and errors naming the file, line and key path."""

from __future__ import annotations

import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings, settings_from_dict
from orchestra_core.model.budget import Budget
from orchestra_core.model.money import Money
from orchestra_core.model.pricing import ModelPrice
from orchestra_core.model.settings import ConfigError


def _load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(path)


def test_prices_and_the_budget_are_read(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        pricing:
          claude-sonnet-4-20250514: {input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75}
          house-model: {input: 0, output: 1}
        budget: {max_cost_usd: 5.0, max_tokens: 2000000, max_wall_time: 2h}
        """,
    )
    assert settings.pricing == {  # type: ignore[attr-defined]
        "claude-sonnet-4-20250514": ModelPrice("3.0", "15.0", "0.3", "3.75"),
        "house-model": ModelPrice("0", "1"),
    }
    assert settings.pricing["claude-sonnet-4-20250514"].input == Decimal("3.0")  # type: ignore[attr-defined]
    assert settings.budget.to_budget() == Budget(Money.usd(5), 2_000_000, 7200.0)  # type: ignore[attr-defined]


def test_every_bad_price_and_budget_is_named_with_its_file_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(
            tmp_path,
            """\
            pricing:
              model-a: {input: -1, output: abc}
              model-b: {input: 1}
              model-c: {input: 1, output: 2, cache_reed: 0.1}
              model-d: 3
            budget:
              max_cost_usd: -1
              max_tokens: 0
              max_wall_time: forever
            """,
        )
    path = tmp_path / "orchestra.yaml"
    assert [str(problem.render()) for problem in caught.value.problems] == [
        f"{path}:2: pricing.model-a.input: expected a number of US dollars from 0 to 1,000,000 (per million tokens), got -1",
        f"{path}:2: pricing.model-a.output: expected a number of US dollars of 0 or more (such as 3 or 0.30), got a "
        "string ('abc')",
        f"{path}:3: pricing.model-b.output: required key is missing",
        f"{path}:4: pricing.model-c.cache_reed: unknown key (did you mean cache_read?)",
        f"{path}:5: pricing.model-d: expected a mapping, got a number (3)",
        f"{path}:7: budget.max_cost_usd: expected a number of US dollars above 0 (at most 1,000,000,000), got -1",
        f"{path}:8: budget.max_tokens: expected a whole number of 1 or more, got 0",
        f"{path}:9: budget.max_wall_time: expected a duration such as 90, 90s, 10m or 1h, got a string ('forever')",
    ]


@pytest.mark.parametrize(
    ("budget", "detail"),
    [
        ({"max_cost_usd": "5"}, "budget.max_cost_usd: expected a number of US dollars above 0"),
        ({"max_cost_usd": True}, "budget.max_cost_usd: expected a number of US dollars above 0"),
        ({"max_tokens": 1.5}, "budget.max_tokens: expected an integer"),
        ({"max_cost": 5}, "budget.max_cost: unknown key (did you mean max_cost_usd?)"),
    ],
)
def test_a_budget_as_a_dict_is_checked_the_same_way(tmp_path: Path, budget: dict, detail: str) -> None:
    with pytest.raises(ConfigError, match=detail.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        settings_from_dict({"budget": budget}, project_root=tmp_path)
