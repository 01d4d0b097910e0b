"""Provider kinds (package, extra, API key), resolving a provider name, and the run-start provider check."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from orchestra_adapters.llm.cassette import load_cassette
from orchestra_core.model.settings import ALIASES, OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.ports.chat_models import ProviderConfigError


@frozen
class ProviderKind:
    """How to talk to one family of providers.

    Attributes:
        name: `anthropic`, `openai`, `openai-compatible`, `ollama` or `scripted`.
        module: The LangChain integration module imported lazily (None for scripted).
        class_name: Its chat model class.
        package: The pip package that provides `module`.
        extra: The Orchestra extra that installs `package`.
        key_env: The environment variable holding the API key by default (None when keys are optional).
        takes_key: Whether the provider uses an API key at all.
    """

    name: str
    module: str | None = None
    class_name: str | None = None
    package: str | None = None
    extra: str | None = None
    key_env: str | None = None
    takes_key: bool = True


KINDS: Mapping[str, ProviderKind] = {
    "anthropic": ProviderKind(
        "anthropic",
        "langchain_anthropic",
        "ChatAnthropic",
        "langchain-anthropic",
        "anthropic",
        "ANTHROPIC_API_KEY",
    ),
    "openai": ProviderKind(
        "openai", "langchain_openai", "ChatOpenAI", "langchain-openai", "openai", "OPENAI_API_KEY"
    ),
    "openai-compatible": ProviderKind(
        "openai-compatible", "langchain_openai", "ChatOpenAI", "langchain-openai", "openai"
    ),
    "ollama": ProviderKind(
        "ollama", "langchain_ollama", "ChatOllama", "langchain-ollama", "ollama", takes_key=False
    ),
    "scripted": ProviderKind("scripted", takes_key=False),
}


@frozen
class ResolvedProvider:
    """A provider name from orchestra.yaml with its kind and settings."""

    name: str
    kind: ProviderKind
    settings: ProviderSettings

    def key_env(self) -> str | None:
        """The environment variable the API key is read from (None when the provider takes no key)."""
        if not self.kind.takes_key:
            return None
        if self.settings.api_key_env:
            return self.settings.api_key_env
        return self.kind.key_env or re.sub(r"[^A-Z0-9]", "_", self.name.upper()) + "_API_KEY"

    def key_required(self) -> bool:
        """Keys are required by the hosted providers and whenever `api_key_env` is set explicitly."""
        return self.kind.takes_key and bool(self.kind.key_env or self.settings.api_key_env)

    def api_key(self, environ: Mapping[str, str]) -> str | None:
        """The API key from the environment.

        Raises:
            ProviderConfigError: A required key is missing; the message names the variable.
        """
        variable = self.key_env()
        value = environ.get(variable) if variable else None
        if not value and self.key_required():
            raise ProviderConfigError(
                f"provider {self.name!r} needs an API key: set the environment variable {variable}"
            )
        return value or None

    def cassette_path(self, base_dir: Path) -> Path:
        """The scripted provider's cassette file, relative to orchestra.yaml.

        Raises:
            ProviderConfigError: No cassette is configured.
        """
        if not self.settings.cassette:
            raise ProviderConfigError(
                f"providers.{self.name}.cassette is not set: name the cassette file (relative to orchestra.yaml)"
            )
        return base_dir / self.settings.cassette


def resolve_provider(providers: ProvidersSettings, name: str) -> ResolvedProvider:
    """The provider called `name` ("" means `providers.default`).

    Built-in names pick their kind; any other entry is `openai-compatible` when it has an `api_base` and
    `scripted` when it has a `cassette`.

    Raises:
        ProviderConfigError: No provider is chosen, or the name is unknown.
    """
    chosen = name or providers.default
    if not chosen:
        raise ProviderConfigError(
            "no provider chosen: set providers.default in orchestra.yaml or llm_provider on the node"
        )
    settings = providers.entries.get(chosen) or ProviderSettings()
    if chosen in KINDS and chosen != "openai-compatible":
        return ResolvedProvider(chosen, KINDS[chosen], settings)
    if settings.cassette:
        return ResolvedProvider(chosen, KINDS["scripted"], settings)
    if settings.api_base:
        return ResolvedProvider(chosen, KINDS["openai-compatible"], settings)
    if chosen in providers.entries or chosen == "openai-compatible":
        raise ProviderConfigError(
            f"providers.{chosen} needs an api_base (the URL of its OpenAI-compatible endpoint)"
        )
    known = sorted({*(k for k in KINDS if k != "openai-compatible"), *providers.entries})
    raise ProviderConfigError(
        f"unknown provider {chosen!r} (known: {', '.join(known)}); add providers.{chosen} with an api_base "
        "for an OpenAI-compatible server"
    )


def default_alias(purpose: str) -> str:
    """The alias a call that names no model uses: `cheap` for commit messages, `worker` otherwise."""
    return "cheap" if purpose == "commit_message" else "worker"


def resolve_model_name(provider: ResolvedProvider, model: str, purpose: str) -> str:
    """The model to ask for: an alias of the provider mapped to its model, a literal name unchanged.

    An empty `model` means the purpose's default alias: `cheap` for commit messages, `worker` otherwise.
    The scripted provider needs no alias table: its unmapped aliases are all the model `scripted`.

    Raises:
        ProviderConfigError: `model` is empty and the provider does not define the default alias.
    """
    alias = model or default_alias(purpose)
    mapped = provider.settings.models.get(alias)
    if mapped:
        return mapped
    if provider.kind.name == "scripted" and alias in ALIASES:
        return "scripted"
    if model:
        return model
    raise ProviderConfigError(f"no model given and providers.{provider.name}.models.{alias} is not set")


def import_chat_model_class(provider: ResolvedProvider) -> type:
    """Import the provider's LangChain chat model class (lazily, only when a model is created).

    Raises:
        ProviderConfigError: The integration package is not installed; the message names the extra.
    """
    kind = provider.kind
    assert kind.module and kind.class_name, f"{kind.name} has no LangChain integration"
    try:
        module = importlib.import_module(kind.module)
    except ImportError as error:
        raise ProviderConfigError(_missing_package(provider) + f" ({error})") from None
    return getattr(module, kind.class_name)


def _missing_package(provider: ResolvedProvider) -> str:
    kind = provider.kind
    return (
        f"provider {provider.name!r} needs the {kind.package} package: pip install 'orchestra[{kind.extra}]'"
    )


def provider_problems(
    settings: OrchestraSettings, providers_used: Iterable[str], environ: Mapping[str, str]
) -> list[str]:
    """Everything that would stop the given providers from working, one message each (for `doctor`)."""
    problems: list[str] = []
    checked: set[str] = set()
    for name in providers_used:
        try:
            provider = resolve_provider(settings.providers, name)
        except ProviderConfigError as error:
            problems.append(str(error))
            continue
        if provider.name not in checked:
            checked.add(provider.name)
            problems.extend(_problems_of(provider, settings.base_dir, environ))
    return list(dict.fromkeys(problems))


def _problems_of(provider: ResolvedProvider, base_dir: Path, environ: Mapping[str, str]) -> list[str]:
    problems = []
    if provider.kind.module and importlib.util.find_spec(provider.kind.module) is None:
        problems.append(_missing_package(provider))
    try:
        if provider.kind.name == "scripted":
            load_cassette(provider.cassette_path(base_dir))
        provider.api_key(environ)
    except ProviderConfigError as error:
        problems.append(str(error))
    return problems


def providers_of(choices: Iterable[Any]) -> set[str]:
    """The providers nodes' model choices (`ModelChoice`) need: each node's own and its fallbacks'."""
    return {name for choice in choices for name in (choice.provider, *(t.provider for t in choice.fallbacks))}


def check_providers(
    settings: OrchestraSettings, providers_used: Iterable[str], environ: Mapping[str, str] | None = None
) -> None:
    """Fail at run start, before any node runs, when a provider the run needs cannot work.

    Args:
        settings: The run's orchestra.yaml.
        providers_used: Provider names the run's nodes resolved to ("" means `providers.default`).
        environ: Where API keys are read from (default: the process environment).

    Raises:
        ProviderConfigError: One line per problem (missing keys name their variables,
            missing packages their `pip install 'orchestra[...]'` extra).
    """
    problems = provider_problems(settings, providers_used, os.environ if environ is None else environ)
    if problems:
        raise ProviderConfigError("\n".join(problems))
