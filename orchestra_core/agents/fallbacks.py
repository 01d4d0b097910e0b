"""Model fallbacks: the models a model alias falls back to, and the checks of the fallbacks orchestra.yaml lists.

An alias with fallbacks is written `models.<alias>: {model: M, fallbacks: [F1, F2, ...]}`. Each fallback is
`model`, `alias` (of the same provider), `provider:model` or `provider:alias`: the part before the first `:`
names another provider when it is one (an entry of `providers:`, or anthropic/openai/ollama/scripted);
otherwise the whole text is a model of the alias's own provider (Ollama tags such as `llama3:8b` keep their
colon). A fallback naming an alias stands for that alias's model and, in turn, its fallbacks; a literal model
stands for itself. A model named directly (a node's `llm_model`, an agent's `model`) falls back like the
alias named after it, else like the first alias (in file order) whose model it is.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping

from attrs import frozen

from orchestra_core.model.settings import ALIASES, BUILTIN_PROVIDERS, ProvidersSettings

AliasTable = Callable[[str], Mapping[str, str]]  # a provider's aliases (alias -> model), configured or built in
KeyPath = tuple[str | int, ...]
# Hosted providers whose model names never hold a `:` (OpenAI's fine-tuned `ft:...` models aside): there a
# prefix before `:` that names no provider is a mistake, not part of a model name.
_NO_COLON_MODELS = {"anthropic": (), "openai": ("ft",)}


@frozen
class ModelTarget:
    """A model of a provider, as a call names it (aliases resolved)."""

    provider: str
    model: str

    def render(self) -> str:
        """`provider:model`."""
        return f"{self.provider}:{self.model}"


@frozen
class FallbackProblem:
    """A mistake in a `fallbacks` list: where (`providers.<p>.models.<alias>.fallbacks[i]`) and what."""

    path: KeyPath
    detail: str


class FallbackChains:
    """The fallback chains of the `providers:` section (see the module docstring); chains are computed once."""

    def __init__(self, providers: ProvidersSettings, aliases: AliasTable) -> None:
        self._providers = providers
        self._aliases = aliases
        self._known = tuple(dict.fromkeys([*providers.entries, *BUILTIN_PROVIDERS]))
        self._chains: dict[tuple[str, str], tuple[ModelTarget, ...]] = {}

    def chain(self, provider: str, requested: str) -> tuple[ModelTarget, ...]:
        """The models a call of `requested` (an alias or a model of `provider`) falls back to, in order, without
        the model itself; () when it has none."""
        key = (provider, requested)
        found = self._chains.get(key)
        if found is None:
            alias = self._alias_for(provider, requested)
            found = () if alias is None else self._flatten(provider, alias)
            self._chains[key] = found
        return found

    def providers_in_chains(self) -> set[str]:
        """Every provider some fallback names (run start checks their keys and packages)."""
        return {
            target.provider
            for provider, entry in self._providers.entries.items()
            for alias in entry.fallbacks
            for target in self.chain(provider, alias)
        }

    def parse(self, text: str, provider: str) -> tuple[str, str]:
        """(provider, model or alias) of one fallback of an alias of `provider`."""
        head, colon, rest = text.partition(":")
        if colon and rest and head in self._known:
            return head, rest
        return provider, text

    def problems(self) -> Iterator[FallbackProblem]:
        """Every mistake in the `fallbacks` lists: empty lists and names, unknown providers, unconfigured tier
        aliases, a model falling back to itself, cycles."""
        for provider, entry in self._providers.entries.items():
            for alias, fallbacks in entry.fallbacks.items():
                path: KeyPath = ("providers", provider, "models", alias, "fallbacks")
                if not fallbacks:
                    yield FallbackProblem(
                        path, "an empty list: name at least one fallback model, or write the alias's model alone"
                    )
                for index, text in enumerate(fallbacks):
                    detail = self._problem_of(provider, alias, text)
                    if detail:
                        yield FallbackProblem((*path, index), detail)

    def _problem_of(self, provider: str, alias: str, text: str) -> str | None:
        if not text.strip():
            return "an empty model name"
        unknown = self._unknown_provider(provider, text)
        if unknown:
            return unknown
        target_provider, name = self.parse(text, provider)
        table = self._aliases(target_provider)
        if name in ALIASES and name not in table:
            return (
                f"model alias {name!r} is not configured for provider {target_provider!r}: "
                f"add providers.{target_provider}.models.{name}"
            )
        target = ModelTarget(target_provider, table.get(name, name))
        if target == ModelTarget(provider, self._aliases(provider).get(alias, alias)):
            return f"{text!r} is {alias!r} itself ({target.render()}): a model cannot fall back to itself"
        cycle = self._cycle(target_provider, name, [(provider, alias)])
        if cycle:
            return "the fallbacks go round in a cycle: " + " -> ".join(f"{p}:{a}" for p, a in cycle)
        return None

    def _unknown_provider(self, provider: str, text: str) -> str | None:
        head, colon, rest = text.partition(":")
        if not colon or head in self._known:
            return "names no model after the provider" if colon and head in self._known and not rest else None
        exempt = _NO_COLON_MODELS.get(self._kind(provider))
        # Where model names may hold a colon only a near-spelling of a provider is taken for a typo of one.
        close = difflib.get_close_matches(head, self._known, n=1, cutoff=0.75 if exempt is not None else 0.88)
        if not close and (exempt is None or head in exempt):
            return None  # a model name with a colon (an Ollama tag, an OpenRouter variant)
        hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(self._known)}"
        return f"no provider named {head!r} ({hint}); another provider's model is written provider:model"

    def _kind(self, provider: str) -> str:
        entry = self._providers.entries.get(provider)
        if entry is not None and (entry.cassette or (entry.api_base and provider not in BUILTIN_PROVIDERS)):
            return "other"
        return provider

    def _cycle(self, provider: str, name: str, path: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
        """The cycle through `path` that following the alias `provider:name` closes, if any."""
        node = (provider, name)
        if node in path:
            return [*path[path.index(node) :], node]
        entry = self._providers.entries.get(provider)
        if entry is None or name not in entry.fallbacks:
            return None
        for text in entry.fallbacks[name]:
            found = self._cycle(*self.parse(text, provider), [*path, node])
            if found:
                return found
        return None

    def _alias_for(self, provider: str, requested: str) -> str | None:
        """The alias whose fallbacks a call of `requested` gets: the alias itself, else (a literal model) the
        alias named after it, else the first alias whose model it is; None when none has fallbacks."""
        entry = self._providers.entries.get(provider)
        if entry is None or not entry.fallbacks:
            return None
        if requested in entry.fallbacks:
            return requested
        if requested in self._aliases(provider):
            return None  # an alias of its own, without fallbacks
        return next((alias for alias in entry.fallbacks if entry.models.get(alias) == requested), None)

    def _flatten(self, provider: str, alias: str) -> tuple[ModelTarget, ...]:
        primary = ModelTarget(provider, self._aliases(provider).get(alias, alias))
        found: list[ModelTarget] = []
        self._expand(provider, alias, [(provider, alias)], found)
        return tuple(target for target in dict.fromkeys(found) if target != primary)

    def _expand(self, provider: str, alias: str, path: list[tuple[str, str]], found: list[ModelTarget]) -> None:
        entry = self._providers.entries.get(provider)
        for text in entry.fallbacks.get(alias, ()) if entry is not None else ():
            target_provider, name = self.parse(text, provider)
            table = self._aliases(target_provider)
            if name in ALIASES and name not in table:
                continue  # reported by problems(); never loaded
            found.append(ModelTarget(target_provider, table.get(name, name)))
            if name in table and (target_provider, name) not in path:
                self._expand(target_provider, name, [*path, (target_provider, name)], found)
