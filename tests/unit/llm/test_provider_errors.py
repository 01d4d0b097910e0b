"""Provider errors sorted by what may cure them: a fallback at once (auth, credit, model gone), a fallback after the
node's retries (unavailable), nothing (our own bad request). The stand-ins have the shape of the SDKs' errors:
`status_code`, the parsed `body`, OpenAI's `code`/`type`, and the message `Error code: N - {body}`."""

from __future__ import annotations

from typing import Any

import pytest

from orchestra_adapters.llm.provider_errors import (
    error_message,
    failover_cause,
    failure_reason,
    is_transient,
    provider_wide,
)
from orchestra_adapters.llm.scripted import ScriptedProviderError


class APIStatusError(Exception):
    """anthropic / openai `APIStatusError`: `status_code`, `body`, and `code`/`type` (OpenAI) from the body."""

    def __init__(self, status_code: int, body: dict[str, Any], *, openai: bool = False) -> None:
        super().__init__(f"Error code: {status_code} - {body}")
        self.status_code = status_code
        self.body = body["error"] if openai else body
        if openai:
            self.code, self.type = body["error"].get("code"), body["error"].get("type")


class AuthenticationError(APIStatusError):
    pass


class APITimeoutError(Exception):
    """No status: the request never got an answer."""


class ConnectError(Exception):
    """httpx's: a local server (Ollama, vLLM) that is not running."""


def anthropic(status: int, kind: str, message: str) -> APIStatusError:
    return APIStatusError(status, {"type": "error", "error": {"type": kind, "message": message}})


def openai(status: int, code: str | None, kind: str, message: str) -> APIStatusError:
    return APIStatusError(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, openai=True)


RATE_LIMIT_SELLING_BILLING = (
    "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000. "
    "You can increase your rate limit by adding a payment method to your account at "
    "https://platform.openai.com/account/billing."
)
CASES = {
    "anthropic credit (a 400)": (
        anthropic(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API."), "credit"
    ),
    "anthropic spend limit": (
        anthropic(400, "invalid_request_error", "You have reached your specified API usage limits."), "credit"
    ),
    "openai quota (a 429)": (
        openai(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan."),
        "credit",
    ),
    "openrouter 402": (APIStatusError(402, {"error": {"message": "Insufficient credits", "code": 402}}), "credit"),
    "openai rate limit that mentions billing": (
        openai(429, "rate_limit_exceeded", "tokens", RATE_LIMIT_SELLING_BILLING), "unavailable"
    ),
    "anthropic 401": (AuthenticationError(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}), "auth"),
    "anthropic 403": (anthropic(403, "permission_error", "Your API key does not have permission"), "auth"),
    "anthropic unknown model": (anthropic(404, "not_found_error", "model: claude-opus-9"), "model_gone"),
    "openai model_not_found": (
        openai(404, "model_not_found", "invalid_request_error", "The model `gpt-9` does not exist or you do not have access to it."),
        "model_gone",
    ),
    "a 400 for a retired model": (
        openai(400, None, "invalid_request_error", "The model gpt-4-32k has been deprecated"), "model_gone"
    ),
    "ollama model not pulled": (APIStatusError(404, {"error": "model 'llama3' not found, try pulling it first"}), "model_gone"),
    "anthropic overloaded": (anthropic(529, "overloaded_error", "Overloaded"), "unavailable"),
    "anthropic rate limit": (anthropic(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit"), "unavailable"),
    "a 503": (APIStatusError(503, {"error": "Service Unavailable"}), "unavailable"),
    "a 500": (anthropic(500, "api_error", "Internal server error"), "unavailable"),
    "a timeout": (APITimeoutError("Request timed out."), "unavailable"),
    "a connection error": (ConnectionError("connection refused"), "unavailable"),
    "httpx cannot connect": (ConnectError("[Errno 111] Connection refused"), "unavailable"),
    "our bad request": (anthropic(400, "invalid_request_error", "messages: roles must alternate"), None),
    "anthropic prompt too long": (
        anthropic(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), None
    ),
    "openai context length": (
        openai(400, "context_length_exceeded", "invalid_request_error", "This model's maximum context length is 128000 tokens"),
        None,
    ),
    "a request too large": (anthropic(413, "request_too_large", "Request exceeds the maximum allowed number of bytes"), None),
    "a 422": (APIStatusError(422, {"error": "Unprocessable"}), None),
    "not a provider's error": (ValueError("bad tool arguments"), None),
    "scripted 402": (ScriptedProviderError("credit balance too low", 402), "credit"),
    "scripted quota 429": (ScriptedProviderError("insufficient_quota: You exceeded your current quota", 429), "credit"),
    "scripted 429": (ScriptedProviderError("rate limit exceeded", 429), "unavailable"),
    "scripted 404": (ScriptedProviderError("no such model", 404), "model_gone"),
    "scripted 400": (ScriptedProviderError("bad request", 400), None),
}


@pytest.mark.parametrize(("error", "cause"), list(CASES.values()), ids=list(CASES))
def test_each_error_gets_the_cause_a_fallback_could_cure(error: BaseException, cause: str | None) -> None:
    assert failover_cause(error) == cause


@pytest.mark.parametrize(("error", "cause"), list(CASES.values()), ids=list(CASES))
def test_only_unavailable_errors_are_worth_a_retry_of_the_same_model(error: BaseException, cause: str | None) -> None:
    if cause == "unavailable":
        assert is_transient(error)
    elif cause is not None:  # a used-up quota's 429 was retried for nothing before: it fails at once now
        assert not is_transient(error)


def test_a_refused_key_or_used_up_credit_stands_for_the_provider_and_a_403_for_the_model() -> None:
    assert provider_wide(CASES["anthropic 401"][0], "auth")
    assert provider_wide(CASES["openai quota (a 429)"][0], "credit")
    assert not provider_wide(CASES["anthropic 403"][0], "auth")
    assert not provider_wide(CASES["anthropic unknown model"][0], "model_gone")


def test_the_reason_is_one_line_with_the_providers_own_message() -> None:
    error = CASES["anthropic credit (a 400)"][0]
    assert error_message(error) == "Your credit balance is too low to access the Anthropic API."
    assert failure_reason(error, "credit") == (
        "credit or quota used up (HTTP 400): Your credit balance is too low to access the Anthropic API."
    )
    assert failure_reason(ScriptedProviderError("line one\n  line two", 529)) == "HTTP 529: line one line two"
    assert failure_reason(APITimeoutError("x" * 500)).endswith("…") and len(failure_reason(APITimeoutError("x" * 500))) == 240
