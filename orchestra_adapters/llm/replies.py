"""What a chat model's reply reports about itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestra_core.model.turn import TokenUsage


def token_usage(message: Any) -> TokenUsage:
    """The tokens a model reply reports (zeros when the provider reports none): LangChain's `usage_metadata`,
    whose `input_tokens` count the cached ones too and whose `input_token_details` split out the cache reads and
    writes (`cache_read`, `cache_creation`)."""
    usage: Mapping[str, Any] = getattr(message, "usage_metadata", None) or {}
    details = usage.get("input_token_details") or {}
    return TokenUsage(
        _tokens(usage.get("input_tokens")),
        _tokens(usage.get("output_tokens")),
        _tokens(details.get("cache_read")),
        _tokens(details.get("cache_creation")),
    )


def _tokens(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
