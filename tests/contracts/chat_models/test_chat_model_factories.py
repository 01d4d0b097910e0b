"""The ChatModelFactory contract run against the LangChain factory (scripted provider, no network)."""

from __future__ import annotations

from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from orchestra_core.testing.contracts.chat_models import ChatModelFactoryContract


class TestLangChainChatModelFactory(ChatModelFactoryContract):
    def make_factory(self, reply: str) -> LangChainChatModelFactory:
        (self.tmp / "cassette.yaml").write_text(f"default: {reply!r}\n", encoding="utf-8")
        settings = OrchestraSettings(
            providers=ProvidersSettings("scripted", {"scripted": ProviderSettings(cassette="cassette.yaml")}),
            source_path=self.tmp / "orchestra.yaml",
        )
        return LangChainChatModelFactory(settings, environ={})
