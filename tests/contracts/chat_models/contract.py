"""The ChatModelFactory contract: every factory passes these tests."""

from __future__ import annotations

import pytest

from orchestra_core.ports.chat_models import PURPOSES, ChatModelFactory, ProviderConfigError


class ChatModelFactoryContract:
    """Subclasses implement `make_factory(reply)`: a factory whose default provider answers `reply`."""

    def make_factory(self, reply: str) -> ChatModelFactory:
        raise NotImplementedError

    def test_is_a_chat_model_factory(self) -> None:
        assert isinstance(self.make_factory("hi"), ChatModelFactory)

    @pytest.mark.parametrize("purpose", PURPOSES)
    def test_default_provider_models_answer_for_every_purpose(self, purpose: str) -> None:
        model = self.make_factory("The answer.").create("", "", purpose=purpose, node_id="n")  # type: ignore[arg-type]
        assert model.invoke("Question?").content == "The answer."

    def test_unknown_providers_are_provider_config_errors(self) -> None:
        with pytest.raises(ProviderConfigError, match="no-such-provider"):
            self.make_factory("x").create("no-such-provider", "m")

    def test_unknown_purposes_are_refused(self) -> None:
        with pytest.raises(ValueError):
            self.make_factory("x").create("", "", purpose="poetry")  # type: ignore[arg-type]
