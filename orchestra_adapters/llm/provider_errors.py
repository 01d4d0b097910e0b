"""A provider's error: which kind it is (may a retry or a fallback model help?) and one line saying why.

Providers' SDKs raise errors carrying the HTTP status (`status_code`, or `response.status_code`) and the body's
error type or code (`code`, `type`, `body`); the scripted provider's `error:` replies carry the status alone.
The kind is read from the status and the error's text together, since providers disagree: Anthropic reports
a used-up credit balance as a 400, OpenAI a used-up quota as a 429 (`insufficient_quota`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from orchestra_core.model.failover import AUTH, CAUSE_TEXT, CREDIT, MODEL_GONE, UNAVAILABLE

# HTTP statuses a retry can cure: timeouts, conflicts, rate limits and server errors (Attractor 3.6).
_TRANSIENT_STATUS = frozenset({408, 409, 429})
_TRANSIENT_NAME_PARTS = ("RateLimit", "Timeout", "Connect", "Overloaded", "InternalServer", "Unavailable")
# A used-up credit balance or quota, in the words (and codes) providers use; a 429 needs one of these.
_QUOTA = re.compile(
    r"insufficient[_ ]quota|exceeded your current quota|quota exceeded|credit balance|insufficient[_ ]credits?"
    r"|out of credits",
    re.IGNORECASE,
)
# Other statuses also count billing and spending limits (a 429 may mention billing only to sell a higher limit).
_CREDIT = re.compile(_QUOTA.pattern + r"|billing|payment required|spend(?:ing)? limit|usage limit", re.IGNORECASE)
# A model the provider does not have (or no longer has, or not for this key).
_MODEL_GONE = re.compile(
    r"model_not_found|model[^.]{0,80}(?:does not exist|not found|not exist|deprecated|decommissioned|retired"
    r"|not available|no longer)|no such model|unknown model|invalid model|not_found_error",
    re.IGNORECASE,
)
# Our own request is too large for the model: the conversation's size, which no switch of model is meant to hide.
_CONTEXT_LENGTH = re.compile(
    r"context[_ ]length|context window|prompt is too long|maximum context|too many tokens|request_too_large",
    re.IGNORECASE,
)
MAX_REASON = 240


def status_code_of(error: BaseException) -> int | None:
    """The HTTP status an SDK error carries (`status_code`, or `response.status_code`), if any."""
    for holder in (error, getattr(error, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def is_transient(error: BaseException) -> bool:
    """Rate limits, timeouts, connection problems and 5xx answers; not auth, bad requests or config."""
    if failover_cause(error) in (AUTH, CREDIT, MODEL_GONE):
        return False
    code = status_code_of(error)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    return any(part in type(error).__name__ for part in _TRANSIENT_NAME_PARTS)


def failover_cause(error: BaseException) -> str | None:
    """Why a fallback model may succeed where this model failed, or None when it may not.

    `auth` (401; a 403 that is not about one model), `credit` (402, or a quota, credit or billing message at any
    status), `model_gone` (404, or a message saying the model does not exist; a 403 about the model) switch at
    once; `unavailable` (what `is_transient` cures: 429 rate limits, 408/409, 5xx with 503 and 529 overload,
    timeouts, connection errors) switches once the node's retries are used up. None for errors our own request
    caused (400 bad request, 413/422, a context-length error) and for anything that is not a provider's answer.
    """
    code = status_code_of(error)
    text = error_text(error)
    if code == 402 or (code == 429 and _QUOTA.search(text)) or (code in (None, 400, 403) and _CREDIT.search(text)):
        return CREDIT
    if code in (400, 413, 422) and _CONTEXT_LENGTH.search(text):
        return None
    if code == 404 or (code in (None, 400, 403) and _MODEL_GONE.search(text)):
        return MODEL_GONE
    if code in (401, 403) or type(error).__name__ in ("AuthenticationError", "PermissionDeniedError"):
        return AUTH
    if code is not None:
        return UNAVAILABLE if code in _TRANSIENT_STATUS or code >= 500 else None
    if isinstance(error, TimeoutError | ConnectionError):
        return UNAVAILABLE
    return UNAVAILABLE if any(part in type(error).__name__ for part in _TRANSIENT_NAME_PARTS) else None


def provider_wide(error: BaseException, cause: str) -> bool:
    """Whether the failure stands for the whole provider (a refused key, used-up credit), not just the model: a 403
    may refuse one model only."""
    return cause == CREDIT or (cause == AUTH and status_code_of(error) != 403)


def error_text(error: BaseException) -> str:
    """The error's message with the codes its body carries (`type`, `code`), for matching."""
    parts = [str(error)]
    for holder in (error, _error_body(error)):
        for name in ("type", "code"):
            value = holder.get(name) if isinstance(holder, Mapping) else getattr(holder, name, None)
            if isinstance(value, str):
                parts.append(value)
    return " ".join(parts)


def _error_body(error: BaseException) -> Any:
    body = getattr(error, "body", None)
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return body["error"]
    return body


def error_message(error: BaseException) -> str:
    """The provider's own message (the body's `error.message` when there is one), on one line, shortened."""
    body = _error_body(error)
    message = body.get("message") if isinstance(body, Mapping) else None
    text = message if isinstance(message, str) and message.strip() else str(error) or type(error).__name__
    line = " ".join(text.split())
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"


def failure_reason(error: BaseException, cause: str | None = None) -> str:
    """One line for a record: `credit or quota used up (HTTP 402): Your credit balance is too low`."""
    code = status_code_of(error)
    status = f" (HTTP {code})" if code is not None else ""
    prefix = f"{CAUSE_TEXT[cause]}{status}: " if cause else (f"HTTP {code}: " if code is not None else "")
    return prefix + error_message(error)


class FailoverExhausted(Exception):
    """Every model of a fallback chain failed; `attempts` holds `provider model: reason` for each, in order."""

    def __init__(self, attempts: tuple[str, ...]) -> None:
        super().__init__("every model failed: " + "; ".join(attempts))
        self.attempts = attempts

