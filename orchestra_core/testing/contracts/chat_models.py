"""The ChatModelFactory contract: models for every purpose, provider errors named."""

from __future__ import annotations

from typing import Any

from orchestra_core.ports.chat_models import PURPOSES, ChatModelFactory, ProviderConfigError
from orchestra_core.testing.contracts._base import PortContract, cases, raises


class ChatModelFactoryContract(PortContract):
    """A runner implements `make_factory(reply)`: a factory whose default provider answers `reply` to
    every call (a scripted provider, say: the contract makes no network call)."""

    def make_factory(self, reply: str) -> ChatModelFactory:
        """A factory whose default provider's models all answer `reply`."""
        raise NotImplementedError

    def test_is_a_chat_model_factory(self) -> None:
        assert isinstance(self.make_factory("hi"), ChatModelFactory)

    @cases(**{purpose: (purpose,) for purpose in PURPOSES})
    def test_default_provider_models_answer_for_every_purpose(self, purpose: Any) -> None:
        model = self.make_factory("The answer.").create("", "", purpose=purpose, node_id="n")
        assert model.invoke("Question?").content == "The answer."

    def test_unknown_providers_are_provider_config_errors(self) -> None:
        with raises(ProviderConfigError, match="no-such-provider"):
            self.make_factory("x").create("no-such-provider", "m")

    def test_unknown_purposes_are_refused(self) -> None:
        purpose: Any = "poetry"
        with raises(ValueError):
            self.make_factory("x").create("", "", purpose=purpose)
