"""ChatModelCommitMessages: commit messages from any LangChain chat model (the `cheap` alias in practice)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attrs import evolve
from langchain_core.messages import HumanMessage, SystemMessage

from orchestra_adapters.llm.failover import FailoverChatModel
from orchestra_adapters.llm.replies import token_usage
from orchestra_core.model.failover import ModelFailover
from orchestra_core.model.pricing import ModelUsage
from orchestra_core.ports.commit_messages import CommitMessageRequest, OnUsage

SYSTEM_PROMPT = (
    "You write git commit messages for changes an AI coding agent made.\n"
    "Answer with the commit message only: no preamble, no code fences, no quotes.\n"
    'First line: an imperative summary of at most 72 characters ("Add ...", "Fix ..."), no final period.\n'
    "Then a blank line and a short body (a few lines, wrapped at 72 columns) saying what changed and why.\n"
    "Do not list files or line counts, and do not add trailers such as Signed-off-by."
)


class ChatModelCommitMessages:
    """Asks a chat model for a commit message; any error propagates (the workspace falls back)."""

    def __init__(self, model: Any, *, system_prompt: str = SYSTEM_PROMPT, provider: str = "") -> None:
        """Wrap a chat model.

        Args:
            model: Anything with LangChain's `invoke(messages)` returning a message with `.content`.
            system_prompt: The instructions sent with every request.
            provider: The model's provider name, for the usage reported.
        """
        self._model = model
        self._system_prompt = system_prompt
        self._provider = provider
        self._model_name = str(getattr(model, "model_name", None) or getattr(model, "model", None) or "")

    def generate(
        self,
        request: CommitMessageRequest,
        *,
        on_usage: OnUsage | None = None,
        on_failover: Callable[[ModelFailover], None] | None = None,
    ) -> str:
        """The model's message; its model and tokens go to `on_usage` (what the message cost is counted); with
        fallbacks, `on_failover` hears of a switch (no node retries a commit message, so an unavailable model fails
        over at once)."""
        if isinstance(self._model, FailoverChatModel):

            def report(failover: ModelFailover) -> None:
                if on_failover is not None:
                    on_failover(evolve(failover, node_id=request.node_id))

            self._model.set_attempt(last_attempt=True, on_failover=report)
        response = self._model.invoke(
            [SystemMessage(content=self._system_prompt), HumanMessage(content=render_request(request))]
        )
        if on_usage is not None:
            name = (getattr(response, "response_metadata", None) or {}).get("model_name") or self._model_name
            on_usage(ModelUsage(str(name), self._provider, token_usage(response)))
        return content_text(getattr(response, "content", response))


def render_request(request: CommitMessageRequest) -> str:
    """The user message: the agent's intent, the files and the (possibly shortened) staged diff."""
    intent = request.intent.strip() or "(the agent did not say)"
    note = (
        "\n(The diff was shortened; describe the whole change from what is shown.)"
        if request.diff_truncated
        else ""
    )
    return (
        f"Agent intent: {intent}\n\nFiles changed: {', '.join(request.files)}\n\nDiff:{note}\n{request.diff}"
    )


def content_text(content: Any) -> str:
    """A chat response's text, whether the content is a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = [
            block.get("text", "") if isinstance(block, dict) else block if isinstance(block, str) else ""
            for block in content
        ]
        return "".join(texts)
    return str(content)
