"""FailoverChatModel: a chat model that goes on with the next fallback model when its model cannot answer.

The factory gives one to every caller whose model has fallbacks (`orchestra_core.agents.fallbacks`); a model
without fallbacks is the provider's own chat model, unwrapped. A failed call is retried at once on the next
model with the same input (the conversation so far), so an agent continues rather than starts over:

- `auth`, `credit` and `model_gone` failures switch at once, and the run's ModelHealth remembers them: later
  calls of any node (and commit messages) skip that model (the whole provider, for a refused key or used-up
  credit) for the rest of the run;
- `unavailable` failures (overload, rate limits, 5xx) switch only on the node's last attempt (`set_attempt`),
  else they are raised for the node's retry policy; such a switch lasts for the rest of the node's execution;
- anything else (a bad request, a context-length error) is raised as it is: no other model is tried.

Once switched, a wrapper stays on the fallback for its lifetime: a node execution for agents and direct calls,
the run for the commit-message model.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from attrs import define, field, frozen

from orchestra_adapters.llm.provider_errors import (
    FailoverExhausted,
    failover_cause,
    failure_reason,
    provider_wide,
)
from orchestra_core.agents.fallbacks import ModelTarget
from orchestra_core.model.context import Context
from orchestra_core.model.failover import UNAVAILABLE, ModelFailover, is_last_attempt

OnFailover = Callable[[ModelFailover], None]


@frozen
class Candidate:
    """One model of a chain and how to make its chat model (made on first use)."""

    target: ModelTarget
    build: Callable[[], Any]


class ModelHealth:
    """What one run has learnt about models that cannot answer (thread-safe): a provider whose key was refused
    or whose credit is used up, a model that does not exist; each with what was seen."""

    def __init__(self) -> None:
        self._providers: dict[str, str] = {}
        self._models: dict[ModelTarget, str] = {}
        self._lock = threading.Lock()

    def unusable(self, target: ModelTarget) -> str | None:
        """Why the model is not to be called again (None when nothing is known against it)."""
        with self._lock:
            seen = self._models.get(target)
            if seen is not None:
                return f"not tried again: {seen}"
            seen = self._providers.get(target.provider)
            return None if seen is None else f"not tried, {target.provider} failed earlier: {seen}"

    def mark(self, target: ModelTarget, reason: str, *, whole_provider: bool) -> None:
        """Remember that the model (or its whole provider) cannot answer, for the rest of the run."""
        with self._lock:
            if whole_provider:
                self._providers.setdefault(target.provider, f"{target.model}: {reason}")
            else:
                self._models.setdefault(target, reason)


@define
class _Chain:
    """The state a FailoverChatModel shares with its tool-bound copies."""

    candidates: tuple[Candidate, ...]
    health: ModelHealth
    node_id: str
    purpose: str
    index: int = 0
    reasons: list[str] = field(factory=list)  # `provider model: reason` of each model passed over, in order
    last_attempt: bool = True
    on_failover: OnFailover | None = None
    lock: threading.RLock = field(factory=threading.RLock)


class FailoverChatModel:
    """A chat model over a chain of candidates: the requested model first, then its fallbacks in order.

    It offers what Orchestra's callers use of a LangChain chat model: `invoke`, `stream`, `bind_tools` and
    `model_name`, plus which model answered (`provider`, `model_name`), which was asked for (`requested_model`)
    and why it switched (`fallback_reason`).
    """

    def __init__(
        self,
        candidates: Sequence[Candidate],
        health: ModelHealth,
        *,
        node_id: str = "",
        purpose: str = "agent",
        _chain: _Chain | None = None,
        _bind: Callable[[Any], Any] | None = None,
    ) -> None:
        if not candidates:
            raise ValueError("a failover chat model needs at least one model")
        self._chain = _chain or _Chain(tuple(candidates), health, node_id, purpose)
        self._bind = _bind
        self._models: dict[int, Any] = {}

    def set_attempt(self, *, last_attempt: bool, on_failover: OnFailover | None = None) -> None:
        """Whether this is the node's last attempt (only then does an `unavailable` model fail over), and who is
        told of each switch."""
        with self._chain.lock:
            self._chain.last_attempt = last_attempt
            self._chain.on_failover = on_failover

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> FailoverChatModel:
        """A copy that binds `tools` to whichever model answers (each model formats them its own way); it shares
        this model's place in the chain."""
        return FailoverChatModel(
            self._chain.candidates, self._chain.health, _chain=self._chain,
            _bind=lambda model: model.bind_tools(tools, **kwargs),
        )  # fmt: skip

    @property
    def provider(self) -> str:
        """The provider of the model that answers now."""
        return self._current().target.provider

    @property
    def model_name(self) -> str:
        """The model that answers now."""
        return self._current().target.model

    @property
    def requested_model(self) -> str:
        """The model asked for (the chain's first)."""
        return self._chain.candidates[0].target.model

    @property
    def fallback_reason(self) -> str:
        """Why the models before the one answering now were passed over ("" while the requested model answers)."""
        with self._chain.lock:
            return "; ".join(self._chain.reasons)

    def _current(self) -> Candidate:
        chain = self._chain
        return chain.candidates[min(chain.index, len(chain.candidates) - 1)]

    def invoke(self, messages: Any, config: Any = None, **kwargs: Any) -> Any:
        """Call the model in use; on a failure a fallback can cure, go on with the next model.

        Raises:
            FailoverExhausted: Every model of the chain failed (each with its reason); the next call starts over
                with the first model the run has not found unusable.
            Exception: The provider's error when no fallback is meant to cure it (see the module docstring).
        """
        while True:
            index, candidate, model = self._in_use()
            try:
                return model.invoke(messages, config, **kwargs)
            except Exception as error:
                self._failed_or_raise(index, candidate, error)

    def stream(self, messages: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        """Stream the reply of the model in use, chunk by chunk. A failure before the first chunk fails over as
        `invoke` does; once a chunk has come, a failure is raised as it is (the caller has heard part of the
        reply: the call fails like any provider error, for the node's retry policy).

        Raises:
            FailoverExhausted: Every model of the chain failed before its first chunk.
            Exception: The provider's error (see `invoke`), or any error once a chunk has come.
        """
        while True:
            index, candidate, model = self._in_use()
            started = False
            try:
                for chunk in model.stream(messages, config, **kwargs):
                    started = True
                    yield chunk
                return
            except Exception as error:
                if started:
                    raise
                self._failed_or_raise(index, candidate, error)

    def _in_use(self) -> tuple[int, Candidate, Any]:
        """The chain's model in use (index, candidate, chat model), passing over those the run found unusable.

        Raises:
            FailoverExhausted: No model of the chain is left.
        """
        chain = self._chain
        while True:
            with chain.lock:
                index = chain.index
                if index >= len(chain.candidates):
                    reasons = tuple(chain.reasons)
                    chain.index, chain.reasons = 0, []
                    raise FailoverExhausted(reasons)
                candidate = chain.candidates[index]
                known = chain.health.unusable(candidate.target)
                if known is not None:  # learnt earlier in the run: not called again
                    self._pass_over(index, _labelled(candidate, known))
                    continue
                return index, candidate, self._model(index)

    def _failed_or_raise(self, index: int, candidate: Candidate, error: Exception) -> None:
        """Go on with the next model when a fallback can cure `error`, else raise it."""
        cause = failover_cause(error)
        if cause is None or (cause == UNAVAILABLE and not self._last_attempt()):
            raise error
        self._failed(index, candidate, error, cause)

    def _last_attempt(self) -> bool:
        with self._chain.lock:
            return self._chain.last_attempt

    def _model(self, index: int) -> Any:
        model = self._models.get(index)
        if model is None:
            model = self._chain.candidates[index].build()
            if self._bind is not None:
                model = self._bind(model)
            self._models[index] = model
        return model

    def _failed(self, index: int, candidate: Candidate, error: BaseException, cause: str) -> None:
        labelled = _labelled(candidate, failure_reason(error, cause))
        if cause != UNAVAILABLE:
            whole = provider_wide(error, cause)
            self._chain.health.mark(candidate.target, failure_reason(error, cause), whole_provider=whole)
        with self._chain.lock:
            if self._chain.index != index:  # a caller in another thread has moved on already
                return
            self._pass_over(index, labelled)
            chain = self._chain
            if chain.index >= len(chain.candidates) or chain.on_failover is None:
                return
            failed, to = candidate.target, chain.candidates[chain.index].target
            notice = ModelFailover(
                node_id=chain.node_id, from_provider=failed.provider, from_model=failed.model,
                to_provider=to.provider, to_model=to.model, cause=cause, reason=failure_reason(error),
                purpose=chain.purpose,
            )  # fmt: skip
            announce = chain.on_failover
        announce(notice)

    def _pass_over(self, index: int, labelled: str) -> None:
        """Leave the model at `index` for the next one (under the chain's lock)."""
        self._chain.reasons.append(labelled)
        self._chain.index = index + 1


def prepare_failover(model: Any, context: Context, on_failover: OnFailover | None) -> None:
    """Tell a model with fallbacks whether this is the node's last attempt (model/failover.py: LAST_ATTEMPT), and
    who hears of its switches; any other model is left as it is."""
    if isinstance(model, FailoverChatModel):
        model.set_attempt(last_attempt=is_last_attempt(context), on_failover=on_failover)


def _labelled(candidate: Candidate, reason: str) -> str:
    return f"{candidate.target.provider} {candidate.target.model}: {reason}"


def answering_model(model: Any, provider: str, name: str) -> tuple[str, str, str, str]:
    """(provider, model, requested_model, fallback_reason) of the model that answered the last call: a
    FailoverChatModel's model in use, else `provider` and `name`, with no failover."""
    if isinstance(model, FailoverChatModel):
        reason = model.fallback_reason
        return model.provider, model.model_name, model.requested_model if reason else "", reason
    return provider, name, "", ""
