"""FailoverChatModel: when it switches (at once, on the last attempt, never), what it carries over (the same input),
what it remembers for the run (ModelHealth), what it tells (ModelFailover) and how it fails (every model named)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from orchestra_adapters.llm.failover import (
    Candidate,
    FailoverChatModel,
    ModelHealth,
    answering_model,
    prepare_failover,
)
from orchestra_adapters.llm.provider_errors import FailoverExhausted
from orchestra_adapters.llm.scripted import ScriptedProviderError
from orchestra_core.agents.fallbacks import ModelTarget
from orchestra_core.model.context import Context
from orchestra_core.model.failover import LAST_ATTEMPT, ModelFailover

CREDIT = ScriptedProviderError("Your credit balance is too low", 402)
OVERLOADED = ScriptedProviderError("Overloaded", 529)
BAD_REQUEST = ScriptedProviderError("messages: roles must alternate", 400)
FORBIDDEN = ScriptedProviderError("no access to this model", 403)


class FakeModel:
    """Answers or raises per call, in order (the last step repeats); records what it was given."""

    def __init__(self, name: str, *steps: str | BaseException, tools: tuple[Any, ...] = ()) -> None:
        self.name, self.steps, self.tools = name, list(steps), tools
        self.inputs: list[Any] = []

    def invoke(self, messages: Any, config: Any = None, **kwargs: Any) -> str:
        self.inputs.append(messages)
        step = self.steps[min(len(self.inputs), len(self.steps)) - 1]
        if isinstance(step, BaseException):
            raise step
        return f"{self.name}: {step}"

    def stream(self, messages: Any, config: Any = None, **kwargs: Any) -> Iterator[str]:
        """The step's words one by one; a (words, error) step raises after its words."""
        self.inputs.append(messages)
        step = self.steps[min(len(self.inputs), len(self.steps)) - 1]
        words, error = step if isinstance(step, tuple) else (step, None)
        if isinstance(words, BaseException):
            raise words
        yield from (f"{self.name}:", *words.split())
        if error is not None:
            raise error

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        bound = FakeModel(self.name, *self.steps, tools=tuple(tools))
        bound.inputs = self.inputs
        return bound


def chain(*models: tuple[str, FakeModel], health: ModelHealth | None = None) -> FailoverChatModel:
    candidates = [Candidate(ModelTarget(provider, model.name), lambda m=model: m) for provider, model in models]
    return FailoverChatModel(candidates, health or ModelHealth(), node_id="implement")


def test_the_requested_model_answers_while_it_can() -> None:
    opus = FakeModel("opus", "fine")
    model = chain(("anthropic", opus), ("openai", FakeModel("gpt-5", "unused")))
    assert model.invoke(["hello"]) == "opus: fine"
    assert answering_model(model, "x", "y") == ("anthropic", "opus", "", "")


def test_used_up_credit_switches_at_once_with_the_same_input_and_says_so() -> None:
    opus, gpt = FakeModel("opus", CREDIT), FakeModel("gpt-5", "carried on")
    heard: list[ModelFailover] = []
    model = chain(("anthropic", opus), ("openai", gpt))
    model.set_attempt(last_attempt=False, on_failover=heard.append)  # not the last attempt: credit does not wait
    conversation = ["prompt", "turn 1", "turn 2"]
    assert model.invoke(conversation) == "gpt-5: carried on"
    assert gpt.inputs == [conversation]  # the conversation so far, not a fresh start
    assert heard == [
        ModelFailover(
            node_id="implement", from_provider="anthropic", from_model="opus", to_provider="openai", to_model="gpt-5",
            cause="credit", reason="HTTP 402: Your credit balance is too low",
        )
    ]  # fmt: skip
    reason = "anthropic opus: credit or quota used up (HTTP 402): Your credit balance is too low"
    assert answering_model(model, "anthropic", "opus") == ("openai", "gpt-5", "opus", reason)
    assert model.invoke(["next"]) == "gpt-5: carried on" and len(opus.inputs) == 1  # stays on the fallback


def test_the_run_remembers_a_used_up_provider_for_every_later_model() -> None:
    health = ModelHealth()
    first = chain(("anthropic", FakeModel("opus", CREDIT)), ("openai", FakeModel("gpt-5", "ok")), health=health)
    first.invoke(["a"])
    opus, sonnet, gpt = FakeModel("opus", "fine"), FakeModel("sonnet", "fine"), FakeModel("gpt-5", "ok")
    heard: list[ModelFailover] = []
    later = chain(("anthropic", opus), ("anthropic", sonnet), ("openai", gpt), health=health)
    later.set_attempt(last_attempt=True, on_failover=heard.append)
    assert later.invoke(["b"]) == "gpt-5: ok"
    assert opus.inputs == sonnet.inputs == [] and heard == []  # skipped without a call; announced the first time
    assert later.fallback_reason == (
        "anthropic opus: not tried, anthropic failed earlier: opus: credit or quota used up (HTTP 402): Your credit "
        "balance is too low; anthropic sonnet: not tried, anthropic failed earlier: opus: credit or quota used up "
        "(HTTP 402): Your credit balance is too low"
    )


def test_a_403_or_a_missing_model_rules_out_that_model_only() -> None:
    health = ModelHealth()
    opus, sonnet = FakeModel("opus", FORBIDDEN), FakeModel("sonnet", "ok")
    assert chain(("anthropic", opus), ("anthropic", sonnet), health=health).invoke(["a"]) == "sonnet: ok"
    assert health.unusable(ModelTarget("anthropic", "opus")) == "not tried again: authentication refused (HTTP 403): no access to this model"
    assert health.unusable(ModelTarget("anthropic", "sonnet")) is None


def test_an_unavailable_model_waits_for_the_nodes_retries_and_is_not_remembered() -> None:
    health = ModelHealth()
    opus, gpt = FakeModel("opus", OVERLOADED), FakeModel("gpt-5", "ok")
    model = chain(("anthropic", opus), ("openai", gpt), health=health)
    model.set_attempt(last_attempt=False)
    with pytest.raises(ScriptedProviderError, match="Overloaded"):  # the node's retry policy goes first
        model.invoke(["a"])
    assert gpt.inputs == []
    model.set_attempt(last_attempt=True)
    assert model.invoke(["a"]) == "gpt-5: ok"
    assert health.unusable(ModelTarget("anthropic", "opus")) is None  # the next node tries it again


def test_errors_a_fallback_cannot_cure_are_raised_as_they_are() -> None:
    gpt = FakeModel("gpt-5", "ok")
    with pytest.raises(ScriptedProviderError, match="roles must alternate"):
        chain(("anthropic", FakeModel("opus", BAD_REQUEST)), ("openai", gpt)).invoke(["a"])
    assert gpt.inputs == []


def test_when_every_model_fails_each_is_named_with_its_reason_and_the_next_call_starts_over() -> None:
    gone = ScriptedProviderError("no such model", 404)
    model = chain(("anthropic", FakeModel("opus", CREDIT)), ("openai", FakeModel("gpt-5", gone, "back")))
    with pytest.raises(FailoverExhausted) as caught:
        model.invoke(["a"])
    assert caught.value.attempts == (
        "anthropic opus: credit or quota used up (HTTP 402): Your credit balance is too low",
        "openai gpt-5: model not available (HTTP 404): no such model",
    )
    assert str(caught.value).startswith("every model failed: anthropic opus: credit")
    with pytest.raises(FailoverExhausted, match="not tried, anthropic failed earlier"):
        model.invoke(["b"])  # both are remembered as unusable: nothing is called


def test_tools_are_bound_to_whichever_model_answers_and_the_copy_shares_the_place_in_the_chain() -> None:
    opus, gpt = FakeModel("opus", CREDIT), FakeModel("gpt-5", "ok")
    model = chain(("anthropic", opus), ("openai", gpt))
    bound = model.bind_tools(["write-file"])
    assert bound.invoke(["a"]) == "gpt-5: ok"
    assert (model.provider, model.model_name) == ("openai", "gpt-5")


def test_the_last_attempt_comes_from_the_context_and_plain_models_are_left_alone() -> None:
    model = chain(("anthropic", FakeModel("opus", OVERLOADED)), ("openai", FakeModel("gpt-5", "ok")))
    prepare_failover(model, Context({LAST_ATTEMPT: False}), None)
    with pytest.raises(ScriptedProviderError):
        model.invoke(["a"])
    prepare_failover(model, Context(), None)  # nobody said: a backend called on its own has no retries
    assert model.invoke(["a"]) == "gpt-5: ok"
    plain = FakeModel("opus", "ok")
    prepare_failover(plain, Context(), None)
    assert answering_model(plain, "anthropic", "opus") == ("anthropic", "opus", "", "")


def test_a_stream_that_fails_before_its_first_chunk_goes_on_with_the_fallback() -> None:
    opus, gpt = FakeModel("opus", CREDIT), FakeModel("gpt-5", "carried on")
    heard: list[ModelFailover] = []
    model = chain(("anthropic", opus), ("openai", gpt))
    model.set_attempt(last_attempt=False, on_failover=heard.append)
    assert list(model.stream(["prompt"])) == ["gpt-5:", "carried", "on"]
    assert gpt.inputs == [["prompt"]]
    assert [(h.from_model, h.to_model, h.cause) for h in heard] == [("opus", "gpt-5", "credit")]
    assert answering_model(model, "x", "y")[:2] == ("openai", "gpt-5")


def test_a_stream_that_fails_after_its_first_chunk_raises_and_does_not_switch() -> None:
    """Part of the reply was heard already: the call fails as it is (the node's retry policy decides), and
    replaying the input to the fallback inside one stream would tell the listener a second, different reply."""
    opus, gpt = FakeModel("opus", ("half a", CREDIT), "whole reply"), FakeModel("gpt-5", "unused")
    model = chain(("anthropic", opus), ("openai", gpt))
    chunks: list[str] = []
    with pytest.raises(ScriptedProviderError, match="credit balance"):
        chunks.extend(model.stream(["prompt"]))
    assert chunks == ["opus:", "half", "a"]
    assert gpt.inputs == []
    assert answering_model(model, "x", "y") == ("anthropic", "opus", "", "")
    assert list(model.stream(["prompt"])) == ["opus:", "whole", "reply"]  # the next call asks the same model


def test_when_every_stream_fails_before_its_first_chunk_each_is_named() -> None:
    model = chain(("anthropic", FakeModel("opus", CREDIT)), ("openai", FakeModel("gpt-5", FORBIDDEN)))
    with pytest.raises(FailoverExhausted) as raised:
        list(model.stream(["prompt"]))
    assert "opus" in str(raised.value) and "gpt-5" in str(raised.value)
