"""Failover: a model call that failed in a way its model cannot recover from went on with the next fallback.

Causes: `auth` (the key was refused: 401/403), `credit` (credit or quota used up: 402, 429 insufficient_quota,
a billing message), `model_gone` (the model does not exist or is not available to the key: 404,
model_not_found) switch at once; `unavailable` (overload, rate limit, 5xx, timeouts) switches only on the
node's last attempt, once its retries are used up. A backend learns whether an attempt is the last one from
the context key LAST_ATTEMPT, which the codergen handler sets for the length of its backend call.
"""

from __future__ import annotations

from attrs import frozen

from orchestra_core.model.context import Context

AUTH = "auth"
CREDIT = "credit"
MODEL_GONE = "model_gone"
UNAVAILABLE = "unavailable"
FAILOVER_CAUSES = (AUTH, CREDIT, MODEL_GONE, UNAVAILABLE)
CAUSE_TEXT = {
    AUTH: "authentication refused",
    CREDIT: "credit or quota used up",
    MODEL_GONE: "model not available",
    UNAVAILABLE: "unavailable after the node's retries",
}

LAST_ATTEMPT = "internal.last_attempt"


@frozen
class ModelFailover:
    """One switch to a fallback model (stored as `dev.orchestra.ModelFailover`).

    Attributes:
        node_id: The node whose call failed over ("" for a commit message).
        from_provider: The provider of the model that failed.
        from_model: The model that failed.
        to_provider: The provider of the fallback the call went on with.
        to_model: The fallback.
        cause: One of FAILOVER_CAUSES.
        reason: One line from the provider's error.
        purpose: What the call was for (`agent`, `direct`, `fan_in`, `commit_message`).
    """

    node_id: str
    from_provider: str
    from_model: str
    to_provider: str
    to_model: str
    cause: str
    reason: str
    purpose: str = "agent"

    def describe(self) -> str:
        """`anthropic claude-opus-4 failed (credit or quota used up: ...); going on with openai gpt-5`."""
        cause = CAUSE_TEXT.get(self.cause, self.cause)
        return (
            f"{self.from_provider} {self.from_model} failed ({cause}: {self.reason}); "
            f"going on with {self.to_provider} {self.to_model}"
        )


def set_last_attempt(context: Context, last: bool) -> None:
    """Tell the node's backend whether this attempt is the node's last one (the codergen handler does)."""
    context.set(LAST_ATTEMPT, last)


def clear_last_attempt(context: Context) -> None:
    """Remove the key once the backend call returned (no checkpoint keeps it)."""
    context.remove(LAST_ATTEMPT)


def is_last_attempt(context: Context) -> bool:
    """Whether the running attempt is the node's last; True when nobody said (a backend called on its own)."""
    return context.get(LAST_ATTEMPT) is not False
