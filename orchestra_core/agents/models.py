"""Model and provider resolution: precedence across node, agent, graph and provider default; aliases."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from orchestra_core.agents.fallbacks import FallbackChains, ModelTarget
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import ALIASES, ProvidersSettings

# The scripted provider (by name, or any entry with a cassette) needs no alias table: every tier is "scripted".
SCRIPTED_ALIASES: Mapping[str, str] = dict.fromkeys(ALIASES, "scripted")
FALLBACK_ALIAS = "worker"  # the tier used when nothing names a model


class ModelResolutionError(OrchestraError):
    """No provider could be chosen, or a tier alias is not configured for the chosen provider."""


@frozen
class ModelChoice:
    """A resolved model and where each half came from.

    Attributes:
        provider: The provider key (`anthropic`, `openai`, an entry of `providers:`).
        model: The provider's model identifier after alias resolution.
        requested: The model as named (an alias such as `smart`, or the literal), before resolution.
        provider_source: `node`, `agent`, `graph`, `detected` (the literal belongs to one provider's
            alias table) or `default`.
        model_source: `node`, `agent`, `graph` or `default` (the provider's `worker` tier).
        fallbacks: The models a failing call goes on with, in order (see `orchestra_core.agents.fallbacks`).
    """

    provider: str
    model: str
    requested: str
    provider_source: str
    model_source: str
    fallbacks: tuple[ModelTarget, ...] = ()

    @property
    def is_alias(self) -> bool:
        return self.requested != self.model


@frozen
class ModelRequest:
    """The model and provider named at each level ("" where a level names none)."""

    node_model: str = ""
    node_provider: str = ""
    agent_model: str = ""
    agent_provider: str = ""
    graph_model: str = ""
    graph_provider: str = ""


class ModelResolver:
    """Resolves model names and tier aliases against the `providers:` section of orchestra.yaml."""

    def __init__(self, providers: ProvidersSettings) -> None:
        self._providers = providers
        self.fallbacks = FallbackChains(providers, self.aliases)

    def default_provider(self) -> str:
        """`providers.default`, else the only configured provider.

        Raises:
            ModelResolutionError: Neither exists.
        """
        if self._providers.default:
            return self._providers.default
        if len(self._providers.entries) == 1:
            return next(iter(self._providers.entries))
        raise ModelResolutionError(
            "no LLM provider chosen: set providers.default in orchestra.yaml "
            "(or llm_provider on the node or graph)"
        )

    def aliases(self, provider: str) -> Mapping[str, str]:
        """The provider's alias table (configured entries over the built-in ones)."""
        entry = self._providers.entries.get(provider)
        configured = dict(entry.models) if entry is not None else {}
        scripted = provider == "scripted" or (entry is not None and entry.cassette)
        return {**(SCRIPTED_ALIASES if scripted else {}), **configured}

    def resolve_model(self, model_or_alias: str | None, provider: str | None = None) -> tuple[str, str]:
        """Resolve a model name or alias for a provider (default: the default provider).

        An alias key of the provider's `models` table maps to its model; any other name passes through
        as a literal model identifier, except the tier names smart/worker/cheap, which must be configured.
        No name at all means the `worker` tier.

        Returns:
            (provider, model).

        Raises:
            ModelResolutionError: No provider can be chosen, or a tier alias is not configured.
        """
        chosen = provider or self._detected_provider(model_or_alias or "") or self.default_provider()
        return chosen, self._model_for(chosen, model_or_alias or FALLBACK_ALIAS)

    def require_alias(self, alias: str, provider: str | None = None) -> tuple[str, str]:
        """Resolve a tier alias that must be configured (e.g. `cheap` for commit messages).

        Raises:
            ModelResolutionError: The alias is not in the provider's `models` table; says what to add.
        """
        chosen = provider or self.default_provider()
        table = self.aliases(chosen)
        if alias not in table:
            raise ModelResolutionError(_missing_alias(alias, chosen))
        return chosen, table[alias]

    def choose(self, request: ModelRequest) -> ModelChoice:
        """Apply the precedence: node (explicit or stylesheet) > agent config > graph default > provider default.

        Raises:
            ModelResolutionError: No provider can be chosen, or a named tier alias is not configured.
        """
        requested, model_source = _first(
            (request.node_model, "node"), (request.agent_model, "agent"), (request.graph_model, "graph")
        )
        provider, provider_source = _first(
            (request.node_provider, "node"), (request.agent_provider, "agent"), (request.graph_provider, "graph")
        )
        if not provider:
            detected = self._detected_provider(requested)
            provider, provider_source = (detected, "detected") if detected else (self.default_provider(), "default")
        if not requested:
            requested, model_source = FALLBACK_ALIAS, "default"
        model = self._model_for(provider, requested)
        fallbacks = self.fallbacks.chain(provider, requested)
        return ModelChoice(provider, model, requested, provider_source, model_source, fallbacks)

    def _model_for(self, provider: str, name: str) -> str:
        table = self.aliases(provider)
        if name in table:
            return table[name]
        if name in ALIASES:
            raise ModelResolutionError(_missing_alias(name, provider))
        return name

    def _detected_provider(self, model: str) -> str | None:
        """The one provider whose alias table lists `model` as a model (literals only), else None."""
        if not model or model in ALIASES:
            return None
        default = self._providers.default
        if default and model in self.aliases(default):
            return None
        owners = [name for name, entry in self._providers.entries.items() if model in entry.models.values()]
        return owners[0] if len(owners) == 1 else None


def _first(*candidates: tuple[str, str]) -> tuple[str, str]:
    for value, source in candidates:
        if value:
            return value, source
    return "", ""


def _missing_alias(alias: str, provider: str) -> str:
    return (
        f"model alias {alias!r} is not configured for provider {provider!r}: "
        f"add providers.{provider}.models.{alias} to orchestra.yaml"
    )
