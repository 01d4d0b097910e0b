"""`providers.<p>.models.<alias>: {model, fallbacks}`: loading, the chains they make, and every mistake named by
file, line and key path before anything runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.config.orchestra_yaml import load_settings, settings_from_dict
from orchestra_core.agents.fallbacks import ModelTarget
from orchestra_core.agents.models import ModelRequest, ModelResolver
from orchestra_core.model.settings import ConfigError, OrchestraSettings

TWO_PROVIDERS = """\
providers:
  default: anthropic
  anthropic:
    models:
      smart: {model: claude-opus-4, fallbacks: [claude-sonnet-4, "openai:gpt-5", "openai:worker"]}
      worker: claude-sonnet-4
      cheap:
        model: claude-haiku-3
        fallbacks: ["openai:cheap"]
  openai:
    models:
      smart: gpt-5
      worker: {model: gpt-5-mini, fallbacks: ["anthropic:worker"]}
      cheap: gpt-5-nano
  ollama:
    models:
      worker: {model: "llama3:70b", fallbacks: ["llama3:8b", "qwen2.5-coder:7b"]}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str) -> OrchestraSettings:
    return load_settings(write(tmp_path, text))


def problems(tmp_path: Path, text: str) -> list[tuple[int | None, str | None, str]]:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return [(problem.line, problem.key, problem.detail) for problem in caught.value.problems]


def test_the_mapping_form_keeps_the_model_and_its_fallbacks_and_the_string_form_still_works(tmp_path: Path) -> None:
    anthropic = load(tmp_path, TWO_PROVIDERS).providers.entries["anthropic"]
    assert dict(anthropic.models) == {"smart": "claude-opus-4", "worker": "claude-sonnet-4", "cheap": "claude-haiku-3"}
    assert dict(anthropic.fallbacks) == {
        "smart": ("claude-sonnet-4", "openai:gpt-5", "openai:worker"),
        "cheap": ("openai:cheap",),
    }


def test_chains_resolve_aliases_follow_named_aliases_and_drop_repeats(tmp_path: Path) -> None:
    models = ModelResolver(load(tmp_path, TWO_PROVIDERS).providers)
    # openai:worker is gpt-5-mini, which falls back to anthropic:worker (claude-sonnet-4, already in the chain)
    assert models.fallbacks.chain("anthropic", "smart") == (
        ModelTarget("anthropic", "claude-sonnet-4"), ModelTarget("openai", "gpt-5"), ModelTarget("openai", "gpt-5-mini"),
    )  # fmt: skip
    assert models.fallbacks.chain("anthropic", "cheap") == (ModelTarget("openai", "gpt-5-nano"),)
    assert models.fallbacks.chain("anthropic", "worker") == ()  # an alias without fallbacks of its own
    # Ollama tags keep their colon: `llama3` is no provider
    assert models.fallbacks.chain("ollama", "worker") == (
        ModelTarget("ollama", "llama3:8b"), ModelTarget("ollama", "qwen2.5-coder:7b"),
    )  # fmt: skip


def test_a_model_named_directly_falls_back_like_the_alias_whose_model_it_is(tmp_path: Path) -> None:
    models = ModelResolver(load(tmp_path, TWO_PROVIDERS).providers)
    choice = models.choose(ModelRequest(node_model="claude-opus-4"))
    assert (choice.provider, choice.model, choice.provider_source) == ("anthropic", "claude-opus-4", "detected")
    assert [target.render() for target in choice.fallbacks] == [
        "anthropic:claude-sonnet-4", "openai:gpt-5", "openai:gpt-5-mini",
    ]
    assert models.choose(ModelRequest(node_model="some-literal")).fallbacks == ()
    assert models.choose(ModelRequest(agent_model="smart", agent_provider="openai")).fallbacks == ()


def test_an_alias_named_after_its_model_gives_a_literal_its_own_fallbacks(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """\
        providers:
          openai:
            models:
              smart: {model: gpt-5, fallbacks: [gpt-5-mini]}
              gpt-5: {model: gpt-5, fallbacks: ["o4-mini"]}
        """,
    )
    choice = ModelResolver(settings.providers).choose(ModelRequest(node_model="gpt-5"))
    assert choice.fallbacks == (ModelTarget("openai", "o4-mini"),)


def test_fallback_problems_are_all_named_with_file_line_and_key_path(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """\
        providers:
          default: anthropic
          anthropic:
            models:
              smart: {model: claude-opus-4, fallbacks: ["openai:smart", "opnai:gpt-5", "azure:gpt-5", claude-opus-4]}
              worker: {model: claude-sonnet-4, fallbacks: []}
              cheap: {model: claude-haiku-3, fallbacks: ["openai:cheap", "", "openai:"]}
          openai:
            models: {smart: {model: gpt-5, fallbacks: ["anthropic:smart"]}}
        """,
    )
    key = "providers.anthropic.models"
    assert found == [
        (5, f"{key}.smart.fallbacks[0]", "the fallbacks go round in a cycle: anthropic:smart -> openai:smart -> anthropic:smart"),
        (5, f"{key}.smart.fallbacks[1]", "no provider named 'opnai' (did you mean openai?); another provider's model is written provider:model"),
        (5, f"{key}.smart.fallbacks[2]", "no provider named 'azure' (known: anthropic, openai, ollama, scripted); another provider's model is written provider:model"),
        (5, f"{key}.smart.fallbacks[3]", "'claude-opus-4' is 'smart' itself (anthropic:claude-opus-4): a model cannot fall back to itself"),
        (6, f"{key}.worker.fallbacks", "an empty list: name at least one fallback model, or write the alias's model alone"),
        (7, f"{key}.cheap.fallbacks[0]", "model alias 'cheap' is not configured for provider 'openai': add providers.openai.models.cheap"),
        (7, f"{key}.cheap.fallbacks[1]", "an empty model name"),
        (7, f"{key}.cheap.fallbacks[2]", "names no model after the provider"),
        (9, "providers.openai.models.smart.fallbacks[0]", "the fallbacks go round in a cycle: openai:smart -> anthropic:smart -> openai:smart"),
    ]  # fmt: skip


def test_a_longer_cycle_through_three_aliases_is_found(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """\
        providers:
          anthropic:
            models:
              smart: {model: a, fallbacks: [worker]}
              worker: {model: b, fallbacks: [cheap]}
              cheap: {model: c, fallbacks: [smart]}
        """,
    )
    assert [(line, key) for line, key, _ in found] == [
        (4, "providers.anthropic.models.smart.fallbacks[0]"),
        (5, "providers.anthropic.models.worker.fallbacks[0]"),
        (6, "providers.anthropic.models.cheap.fallbacks[0]"),
    ]
    assert found[0][2] == "the fallbacks go round in a cycle: anthropic:smart -> anthropic:worker -> anthropic:cheap -> anthropic:smart"


def test_shape_mistakes_in_the_mapping_form_are_located(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        """\
        providers:
          anthropic:
            models:
              smart: {model: claude-opus-4, fallback: [x]}
              worker: {fallbacks: [x]}
              cheap: 3
              other: {model: m, fallbacks: claude-haiku}
              more: {model: m, fallbacks: [5]}
            fallbacks: {smart: [x]}
        """,
    )
    assert found == [
        (4, "providers.anthropic.models.smart.fallback", "unknown key (did you mean fallbacks?)"),
        (5, "providers.anthropic.models.worker.model", "required key is missing"),
        (6, "providers.anthropic.models.cheap", "expected a model name or a mapping with model and fallbacks, got a number (3)"),
        (7, "providers.anthropic.models.other.fallbacks", "expected a list, got a string ('claude-haiku')"),
        (8, "providers.anthropic.models.more.fallbacks[0]", "expected a string, got a number (5); quote it to make it text"),
        (9, "providers.anthropic.fallbacks", "unknown key (expected one of: models, api_base, api_key_env, max_tokens, cassette)"),
    ]  # fmt: skip


def test_no_fallbacks_key_or_an_empty_one_means_none(tmp_path: Path) -> None:
    settings = load(
        tmp_path, "providers:\n  anthropic:\n    models:\n      smart: {model: a}\n      worker:\n        model: b\n        fallbacks:\n"
    )
    assert dict(settings.providers.entries["anthropic"].models) == {"smart": "a", "worker": "b"}
    assert settings.providers.entries["anthropic"].fallbacks == {}


def test_settings_given_as_a_dict_are_checked_the_same_way(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"providers\.anthropic\.models\.smart\.fallbacks: an empty list"):
        settings_from_dict(
            {"providers": {"anthropic": {"models": {"smart": {"model": "a", "fallbacks": []}}}}}, project_root=tmp_path
        )


_NAMES = st.text(alphabet="abcdefghijklmnop-0123456789.", min_size=1, max_size=12)


@given(
    alias_models=st.dictionaries(st.sampled_from(["smart", "worker", "cheap", "fast"]), _NAMES, min_size=1),
    picks=st.lists(st.tuples(st.sampled_from(["smart", "worker", "cheap", "fast"]), st.sampled_from(["smart", "worker", "cheap", "fast"])), max_size=6),
)
def test_any_alias_graph_either_loads_with_finite_chains_or_names_its_cycle(
    alias_models: dict[str, str], picks: list[tuple[str, str]]
) -> None:
    fallbacks: dict[str, list[str]] = {}
    for alias, target in picks:
        if alias in alias_models and target in alias_models and target != alias:
            fallbacks.setdefault(alias, []).append(target)
    models = {
        alias: {"model": model, "fallbacks": fallbacks[alias]} if alias in fallbacks else model
        for alias, model in alias_models.items()
    }
    try:
        settings = settings_from_dict({"providers": {"anthropic": {"models": models}}}, project_root=Path("/tmp"))
    except ConfigError as error:
        assert all(p.key and p.key.startswith("providers.anthropic.models.") for p in error.problems)
        return
    resolver = ModelResolver(settings.providers)
    for alias, model in alias_models.items():
        chain = resolver.fallbacks.chain("anthropic", alias)
        assert ModelTarget("anthropic", model) not in chain
        assert len(chain) == len(set(chain)) <= len(alias_models)
