"""The node's Outcome when its chat model failed: RETRY for transient provider errors, FAIL otherwise."""

from __future__ import annotations

from orchestra_adapters.llm.provider_errors import FailoverExhausted, is_transient, status_code_of
from orchestra_core.model.outcome import Outcome, StageStatus


def model_failure(error: BaseException, provider: str, model: str) -> Outcome:
    """The node's Outcome when its model call raised: RETRY when a retry may help, else FAIL."""
    if isinstance(error, FailoverExhausted):  # every model of a fallback chain failed: each is named
        return Outcome(StageStatus.FAIL, failure_reason=str(error))
    code = status_code_of(error)
    detail = f" (HTTP {code})" if code is not None else ""
    reason = f"{provider} model {model} failed{detail}: {error}"
    status = StageStatus.RETRY if is_transient(error) else StageStatus.FAIL
    return Outcome(status, failure_reason=reason)
