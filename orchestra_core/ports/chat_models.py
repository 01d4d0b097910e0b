"""ChatModelFactory port: builds the chat model an agent, a direct call or a commit message talks to."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from orchestra_core.model.errors import OrchestraError

ChatModelPurpose = Literal["agent", "direct", "commit_message", "fan_in"]
PURPOSES: tuple[ChatModelPurpose, ...] = ("agent", "direct", "commit_message", "fan_in")


class ProviderConfigError(OrchestraError):
    """A provider cannot be used as configured.

    Raised for an unknown provider name, a missing API key (the message names the environment variable),
    a provider package that is not installed (the message names the `pip install 'orchestra[...]'` extra)
    and a bad cassette for the scripted provider.
    """


@runtime_checkable
class ChatModelFactory(Protocol):
    """Creates chat models from the `providers` settings of orchestra.yaml."""

    def create(
        self, provider: str, model: str, *, purpose: ChatModelPurpose = "agent", node_id: str = ""
    ) -> Any:
        """A chat model ready to call (a LangChain `BaseChatModel` in the adapters; opaque to the core).

        Args:
            provider: Provider name from orchestra.yaml (`anthropic`, `openai`, `ollama`, `scripted`, or any
                entry with an `api_base`); "" means `providers.default`.
            model: Model name or alias (`smart`, `worker`, `cheap`); "" means the purpose's default alias
                (`cheap` for commit messages, `worker` otherwise).
            purpose: What the model is for; the scripted provider answers commit-message calls from the
                cassette's `commit_messages` and every other call from the node's list.
            node_id: The node the call belongs to ("" when none).

        Raises:
            ProviderConfigError: The provider is unknown, its API key or package is missing, or its
                configuration is invalid.
        """
        ...
