"""Turning a chat model's failure into an Outcome: RETRY for transient provider errors, FAIL otherwise."""

from __future__ import annotations

from orchestra_core.model.outcome import Outcome, StageStatus

# HTTP statuses a retry can cure: timeouts, conflicts, rate limits and server errors (Attractor 3.6).
_TRANSIENT_STATUS = frozenset({408, 409, 429})
_TRANSIENT_NAME_PARTS = ("RateLimit", "Timeout", "Connection", "Overloaded", "InternalServer", "Unavailable")


def status_code_of(error: BaseException) -> int | None:
    """The HTTP status an SDK error carries (`status_code`, or `response.status_code`), if any."""
    for holder in (error, getattr(error, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def is_transient(error: BaseException) -> bool:
    """Rate limits, timeouts, connection problems and 5xx answers; not auth, bad requests or config."""
    code = status_code_of(error)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    return any(part in type(error).__name__ for part in _TRANSIENT_NAME_PARTS)


def model_failure(error: BaseException, provider: str, model: str) -> Outcome:
    """The node's Outcome when its model call raised: RETRY when a retry may help, else FAIL."""
    code = status_code_of(error)
    detail = f" (HTTP {code})" if code is not None else ""
    reason = f"{provider} model {model} failed{detail}: {error}"
    status = StageStatus.RETRY if is_transient(error) else StageStatus.FAIL
    return Outcome(status, failure_reason=reason)
