"""LangChainChatModelFactory: LangChain chat models for the providers of orchestra.yaml."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from orchestra_adapters.collector import collector_paused
from orchestra_adapters.llm.cassette import load_cassette
from orchestra_adapters.llm.failover import Candidate, FailoverChatModel, ModelHealth
from orchestra_adapters.llm.providers import (
    ResolvedProvider,
    default_alias,
    import_chat_model_class,
    resolve_model_name,
    resolve_provider,
)
from orchestra_core.agents.fallbacks import ModelTarget
from orchestra_core.agents.models import ModelResolver
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.chat_models import PURPOSES, ChatModelPurpose

# langchain-openai insists on some key; local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) ignore it.
_NO_KEY = "not-needed"


class LangChainChatModelFactory:
    """Creates chat models; provider packages are imported only when a model of theirs is created.

    Make one factory per run: the scripted provider's cassette position lives here, shared by every node
    of the run (a node visited twice continues its list), and so does what the run has learnt about models
    that cannot answer (`health`: a refused key, used-up credit, a model that does not exist). A model with
    fallbacks (`providers.<p>.models.<alias>.fallbacks`) comes as a FailoverChatModel (llm/failover.py).
    """

    def __init__(self, settings: OrchestraSettings, environ: Mapping[str, str] | None = None) -> None:
        self._settings = settings
        self._environ = environ
        self._players: dict[Path, Any] = {}
        self._lock = threading.Lock()
        self._chains = ModelResolver(settings.providers).fallbacks
        self.health = ModelHealth()

    def create(
        self, provider: str, model: str, *, purpose: ChatModelPurpose = "agent", node_id: str = ""
    ) -> Any:
        """A LangChain chat model (see `ChatModelFactory.create`)."""
        if purpose not in PURPOSES:
            raise ValueError(
                f"unknown chat model purpose {purpose!r} (expected one of {', '.join(PURPOSES)})"
            )
        resolved = resolve_provider(self._settings.providers, provider)
        model_name = resolve_model_name(resolved, model, purpose)
        primary = self._model(resolved, model_name, purpose, node_id)
        fallbacks = self._chains.chain(resolved.name, model or default_alias(purpose))
        if not fallbacks:
            return primary
        candidates = [
            Candidate(ModelTarget(resolved.name, model_name), lambda: primary),
            *(Candidate(target, self._builder(target, purpose, node_id)) for target in fallbacks),
        ]
        return FailoverChatModel(candidates, self.health, node_id=node_id, purpose=purpose)

    def _builder(self, target: ModelTarget, purpose: ChatModelPurpose, node_id: str) -> Callable[[], Any]:
        def build() -> Any:
            return self._model(resolve_provider(self._settings.providers, target.provider), target.model, purpose, node_id)

        return build

    def _model(self, resolved: ResolvedProvider, model_name: str, purpose: ChatModelPurpose, node_id: str) -> Any:
        """The provider's own chat model for `model_name` (a model name, aliases resolved)."""
        if resolved.kind.name == "scripted":
            with collector_paused():
                from orchestra_adapters.llm.scripted import ScriptedChatModel

            return ScriptedChatModel(
                player=self._player(resolved), node_id=node_id, purpose=purpose, model_name=model_name
            )
        with collector_paused():
            model_class = import_chat_model_class(resolved)
        return model_class(**self._constructor_args(resolved, model_name))

    def _constructor_args(self, provider: ResolvedProvider, model_name: str) -> dict[str, Any]:
        settings = provider.settings
        environ = os.environ if self._environ is None else self._environ
        if provider.kind.name == "ollama":
            args: dict[str, Any] = {
                "model": model_name,
                "base_url": settings.api_base,
                "num_predict": settings.max_tokens,
            }
        else:
            key = provider.api_key(environ)
            if key is None and provider.kind.name == "openai-compatible":
                key = _NO_KEY
            args = {
                "model": model_name,
                "api_key": key,
                "base_url": settings.api_base,
                "max_tokens": settings.max_tokens,
            }
            if provider.kind.module == "langchain_openai":
                args["stream_usage"] = True  # a streamed reply (an agent watched live) reports its tokens too
        return {name: value for name, value in args.items() if value is not None}

    def _player(self, provider: ResolvedProvider) -> Any:
        from orchestra_adapters.llm.scripted import CassettePlayer

        path = provider.cassette_path(self._settings.base_dir).resolve()
        with self._lock:
            if path not in self._players:
                self._players[path] = CassettePlayer(load_cassette(path))
            return self._players[path]
