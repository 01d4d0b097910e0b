"""The CodergenBackend contract run against the scripted fake and the direct and LangGraph backends
(scripted chat models, no network)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from attrs import frozen

from orchestra_adapters.backends.direct_backend import DirectLLMBackend
from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.contracts.codergen_backend import CodergenBackendContract


@frozen
class _Agent:
    provider: str = "scripted"
    model: str = "scripted-sonnet"


class _Resolver:
    def resolve(self, node: Node, context: Context) -> _Agent:
        return _Agent()


class _NoTools:
    def tools_for(
        self, node: Node, agent: _Agent, context: Context, tracker: WriteTracker
    ) -> list[AgentTool]:
        return []


def _chat_models(tmp: Path, replies: Mapping[str, str], *, failing: bool = False) -> LangChainChatModelFactory:
    """A scripted provider playing `replies` from a cassette beside an orchestra.yaml in `tmp`; `failing`: each
    node's first call fails with used-up credit, and `scripted-sonnet` falls back to `backup`'s `gpt-backup`."""
    error = "{error: 'Your credit balance is too low', status_code: 402}, " if failing else ""
    nodes = "".join(f"  {node}: [{error}{reply!r}]\n" for node, reply in replies.items())
    (tmp / "cassette.yaml").write_text(f"nodes:\n{nodes}", encoding="utf-8")
    chain = {"worker": ("backup:gpt-backup",)} if failing else {}
    scripted = ProviderSettings(models={"worker": "scripted-sonnet"}, fallbacks=chain, cassette="cassette.yaml")
    settings = OrchestraSettings(
        providers=ProvidersSettings(
            "scripted", {"scripted": scripted, "backup": ProviderSettings(cassette="cassette.yaml")}
        ),
        source_path=tmp / "orchestra.yaml",
    )
    return LangChainChatModelFactory(settings, environ={})


class TestScriptedCodergenBackend(CodergenBackendContract):
    def make_backend(self, replies: Mapping[str, str]) -> ScriptedCodergenBackend:
        return ScriptedCodergenBackend({node: f"text:{reply}" for node, reply in replies.items()})


class TestDirectLLMBackend(CodergenBackendContract):
    capabilities = frozenset({"agent_turns", "failover", "live_activity"})

    def make_backend(self, replies: Mapping[str, str]) -> DirectLLMBackend:
        return DirectLLMBackend(_chat_models(self.tmp, replies), _Resolver())

    def make_failover_backend(self, replies: Mapping[str, str]) -> DirectLLMBackend:
        return DirectLLMBackend(_chat_models(self.tmp, replies, failing=True), _Resolver())


class TestLangGraphBackend(CodergenBackendContract):
    capabilities = frozenset({"agent_turns", "failover", "live_activity"})

    def make_backend(self, replies: Mapping[str, str]) -> LangGraphBackend:
        return self._backend(_chat_models(self.tmp, replies))

    def make_failover_backend(self, replies: Mapping[str, str]) -> LangGraphBackend:
        return self._backend(_chat_models(self.tmp, replies, failing=True))

    def _backend(self, chat_models: LangChainChatModelFactory) -> LangGraphBackend:
        backend = LangGraphBackend(chat_models, _Resolver(), _NoTools(), self.tmp / "agents.db")
        self.add_cleanup(backend.close)
        return backend
