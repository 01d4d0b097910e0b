"""Model and provider resolution: aliases, literal pass-through, precedence, and the providers.default switch."""

from __future__ import annotations

import pytest

from orchestra_core.agents.models import ModelRequest, ModelResolutionError, ModelResolver
from orchestra_core.model.settings import ProviderSettings, ProvidersSettings

ANTHROPIC = ProviderSettings(
    models={"smart": "claude-opus-4-20250514", "worker": "claude-sonnet-4-20250514", "cheap": "claude-haiku-3-20250514"}
)
OPENAI = ProviderSettings(models={"smart": "gpt-4o", "worker": "gpt-4o-mini", "cheap": "gpt-4o-mini"})
OPENROUTER = ProviderSettings(models={"smart": "anthropic/claude-opus-4", "worker": "anthropic/claude-sonnet-4"})


def resolver(default: str | None = "anthropic", **extra: ProviderSettings) -> ModelResolver:
    entries = {"anthropic": ANTHROPIC, "openai": OPENAI, "openrouter": OPENROUTER, **extra}
    return ModelResolver(ProvidersSettings(default=default, entries=entries))


def test_seed_example_alias() -> None:
    assert resolver().resolve_model("smart", "anthropic") == ("anthropic", "claude-opus-4-20250514")


def test_literal_names_pass_through() -> None:
    assert resolver().resolve_model("gpt-4o", "openai") == ("openai", "gpt-4o")
    assert resolver().resolve_model("my-finetune-v3", "anthropic") == ("anthropic", "my-finetune-v3")


def test_no_model_means_the_worker_tier_of_the_default_provider() -> None:
    assert resolver().resolve_model(None) == ("anthropic", "claude-sonnet-4-20250514")
    assert resolver(default="openai").resolve_model("") == ("openai", "gpt-4o-mini")


def test_unconfigured_tier_is_an_error_not_a_literal() -> None:
    with pytest.raises(ModelResolutionError, match=r"add providers\.openrouter\.models\.cheap"):
        resolver().resolve_model("cheap", "openrouter")


def test_custom_aliases_resolve_too() -> None:
    custom = ProviderSettings(models={"fast": "claude-haiku-3-20250514", "worker": "w"})
    assert resolver(anthropic=custom).resolve_model("fast") == ("anthropic", "claude-haiku-3-20250514")


def test_require_alias_cheap_for_commit_messages() -> None:
    assert resolver().require_alias("cheap") == ("anthropic", "claude-haiku-3-20250514")
    with pytest.raises(ModelResolutionError, match=r"'cheap' is not configured for provider 'openrouter'"):
        resolver(default="openrouter").require_alias("cheap")


def test_require_alias_does_not_accept_literals() -> None:
    with pytest.raises(ModelResolutionError):
        resolver().require_alias("gpt-4o")


def test_default_provider_falls_back_to_the_only_configured_one() -> None:
    only = ModelResolver(ProvidersSettings(entries={"openai": OPENAI}))
    assert only.resolve_model("smart") == ("openai", "gpt-4o")


def test_no_provider_at_all_is_a_clear_error() -> None:
    with pytest.raises(ModelResolutionError, match=r"set providers\.default"):
        resolver(default=None).resolve_model("smart")


def test_provider_without_settings_passes_literals_and_refuses_tiers() -> None:
    bare = ModelResolver(ProvidersSettings(default="ollama"))
    assert bare.resolve_model("llama3.1") == ("ollama", "llama3.1")
    with pytest.raises(ModelResolutionError, match=r"providers\.ollama\.models\.worker"):
        bare.resolve_model(None)


def test_scripted_provider_needs_no_alias_table() -> None:
    scripted = ModelResolver(ProvidersSettings(default="scripted", entries={"scripted": ProviderSettings(cassette="c.yaml")}))
    assert scripted.resolve_model(None) == ("scripted", "scripted")
    assert scripted.require_alias("cheap") == ("scripted", "scripted")
    replay = ModelResolver(ProvidersSettings(default="demo", entries={"demo": ProviderSettings(cassette="c.yaml")}))
    assert replay.resolve_model("smart") == ("demo", "scripted")


# Table: (node model, node provider, agent model, agent provider, graph model, graph provider) -> result.
PRECEDENCE = [
    pytest.param(("", "", "", "", "", ""), ("anthropic", "claude-sonnet-4-20250514", "default", "default"), id="provider-default-worker"),
    pytest.param(("", "", "", "", "smart", ""), ("anthropic", "claude-opus-4-20250514", "graph", "default"), id="graph-model"),
    pytest.param(("", "", "", "", "smart", "openai"), ("openai", "gpt-4o", "graph", "graph"), id="graph-model-and-provider"),
    pytest.param(("", "", "cheap", "", "smart", "openai"), ("openai", "gpt-4o-mini", "agent", "graph"), id="agent-model-over-graph"),
    pytest.param(("", "", "cheap", "anthropic", "smart", "openai"), ("anthropic", "claude-haiku-3-20250514", "agent", "agent"), id="agent-over-graph"),
    pytest.param(("smart", "", "cheap", "openai", "", ""), ("openai", "gpt-4o", "node", "agent"), id="node-model-agent-provider"),
    pytest.param(("smart", "openrouter", "cheap", "openai", "worker", "anthropic"), ("openrouter", "anthropic/claude-opus-4", "node", "node"), id="node-over-all"),
    pytest.param(("gpt-4o", "openai", "", "", "", ""), ("openai", "gpt-4o", "node", "node"), id="node-literal"),
    pytest.param(("", "openai", "", "", "", ""), ("openai", "gpt-4o-mini", "default", "node"), id="node-provider-only"),
    pytest.param(("gpt-4o-mini", "", "", "", "", ""), ("openai", "gpt-4o-mini", "node", "detected"), id="literal-detects-its-provider"),
    pytest.param(("some-unknown-model", "", "", "", "", ""), ("anthropic", "some-unknown-model", "node", "default"), id="unknown-literal-default-provider"),
]


@pytest.mark.parametrize(("levels", "expected"), PRECEDENCE)
def test_precedence(levels: tuple[str, ...], expected: tuple[str, str, str, str]) -> None:
    choice = resolver().choose(ModelRequest(*levels))
    assert (choice.provider, choice.model, choice.model_source, choice.provider_source) == expected


def test_literal_in_two_providers_tables_is_not_detected() -> None:
    twin = ProviderSettings(models={"worker": "gpt-4o-mini"})
    choice = resolver(twin=twin).choose(ModelRequest(node_model="gpt-4o-mini"))
    assert (choice.provider, choice.provider_source) == ("anthropic", "default")


def test_switching_providers_default_moves_every_agent_that_does_not_override() -> None:
    requests = {
        "uses-tiers": ModelRequest(agent_model="smart"),
        "no-model": ModelRequest(),
        "overrides-provider": ModelRequest(agent_model="smart", agent_provider="anthropic"),
        "stylesheet-provider": ModelRequest(node_model="worker", node_provider="openrouter"),
    }
    before = {name: resolver("anthropic").choose(request) for name, request in requests.items()}
    after = {name: resolver("openai").choose(request) for name, request in requests.items()}
    assert (before["uses-tiers"].provider, before["uses-tiers"].model) == ("anthropic", "claude-opus-4-20250514")
    assert (after["uses-tiers"].provider, after["uses-tiers"].model) == ("openai", "gpt-4o")
    assert (after["no-model"].provider, after["no-model"].model) == ("openai", "gpt-4o-mini")
    assert after["overrides-provider"] == before["overrides-provider"]
    assert after["stylesheet-provider"] == before["stylesheet-provider"]


def test_choice_reports_alias_use() -> None:
    assert resolver().choose(ModelRequest(node_model="smart")).is_alias
    assert not resolver().choose(ModelRequest(node_model="literal-x")).is_alias
