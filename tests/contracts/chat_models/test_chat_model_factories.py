"""The ChatModelFactory contract run against the LangChain factory (scripted provider, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings
from tests.contracts.chat_models.contract import ChatModelFactoryContract


class TestLangChainChatModelFactory(ChatModelFactoryContract):
    @pytest.fixture(autouse=True)
    def _directory(self, tmp_path: Path) -> None:
        self.directory = tmp_path

    def make_factory(self, reply: str) -> LangChainChatModelFactory:
        (self.directory / "cassette.yaml").write_text(f"default: {reply!r}\n", encoding="utf-8")
        settings = OrchestraSettings(
            providers=ProvidersSettings("scripted", {"scripted": ProviderSettings(cassette="cassette.yaml")}),
            source_path=self.directory / "orchestra.yaml",
        )
        return LangChainChatModelFactory(settings, environ={})
