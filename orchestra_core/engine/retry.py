"""Retry policy (Attractor 3.5, 3.6): attempts from `max_retries`, backoff presets, jitter, retryable errors.

Node attributes: `max_retries` (additional attempts), `retry_policy` (a preset of graph.retry_presets; other
runners write `retry_preset`), `retry_initial_delay` and `retry_max_delay` (durations), `retry_backoff_factor`
(number), `retry_jitter` (boolean). Graph attributes: `default_max_retries` (legacy `default_max_retry`),
`default_retry_policy`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType

from attrs import evolve, frozen

from orchestra_core.graph import retry_presets
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph, Node


@frozen
class BackoffConfig:
    """Delay between attempts: `initial_delay_s * factor ** (n - 1)`, capped, optionally jittered."""

    initial_delay_s: float = 0.2
    factor: float = 2.0
    max_delay_s: float = 60.0
    jitter: bool = True

    def delay_for_attempt(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based).

        With jitter the delay is multiplied by a uniform factor in [0.5, 1.5).
        """
        delay = min(self.initial_delay_s * self.factor ** (attempt - 1), self.max_delay_s)
        if self.jitter:
            delay *= (rng or random).uniform(0.5, 1.5)
        return delay


@frozen
class RetryPolicy:
    """How often a node may run and how long to wait in between."""

    max_attempts: int = 1
    backoff: BackoffConfig = BackoffConfig()


def _policy(preset: retry_presets.RetryPreset) -> RetryPolicy:
    return RetryPolicy(preset.max_attempts, BackoffConfig(preset.initial_delay_s, preset.factor))


PRESETS: Mapping[str, RetryPolicy] = MappingProxyType(
    {name: _policy(preset) for name, preset in retry_presets.PRESETS.items()}
)
_BACKOFF_KEYS = ("retry_initial_delay", "retry_backoff_factor", "retry_max_delay", "retry_jitter")


def _preset(preset: retry_presets.RetryPreset | None) -> RetryPolicy | None:
    return None if preset is None else _policy(preset)


def build_retry_policy(node: Node, graph: Graph) -> RetryPolicy:
    """The node's policy.

    Attempts: node `max_retries` + 1, else the node's preset, else graph `default_max_retries` + 1, else
    the graph's preset, else 1. Backoff: the node's preset, else the graph's, else `standard`, with the
    node's `retry_*` overrides applied.

    Raises:
        AttributeValueError: A retry attribute holds a malformed value.
    """
    node_preset = _preset(retry_presets.node_preset(node))
    graph_preset = _preset(retry_presets.graph_preset(graph))
    if node.max_retries is not None:
        attempts = node.max_retries + 1
    elif node_preset is not None:
        attempts = node_preset.max_attempts
    elif graph.get("default_max_retries") or graph.get("default_max_retry"):
        attempts = graph.default_max_retries + 1
    elif graph_preset is not None:
        attempts = graph_preset.max_attempts
    else:
        attempts = 1
    backoff = (node_preset or graph_preset or PRESETS["standard"]).backoff
    if any(key in node.attrs for key in _BACKOFF_KEYS):
        backoff = evolve(
            backoff,
            initial_delay_s=node.get_duration("retry_initial_delay", backoff.initial_delay_s),
            factor=node.get_float("retry_backoff_factor", backoff.factor),
            max_delay_s=node.get_duration("retry_max_delay", backoff.max_delay_s),
            jitter=node.get_bool("retry_jitter", backoff.jitter),
        )
    return RetryPolicy(max(attempts, 1), backoff)


# Errors that only a mistake in the code raises: another attempt would hit the same bug.
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    AttributeError,
    TypeError,
    NameError,  # UnboundLocalError included
    AssertionError,
    ImportError,
    LookupError,  # KeyError, IndexError
    SyntaxError,
    NotImplementedError,
    RecursionError,
)


def is_programming_error(error: BaseException) -> bool:
    """Whether an exception a handler raised is a bug in code (AttributeError, TypeError, ...), not a failure of
    the work: never retried, it ends the run (exit 70). An exception that says whether it is `retryable` is
    not one, nor is an OrchestraError."""
    if isinstance(getattr(error, "retryable", None), bool) or isinstance(error, OrchestraError):
        return False
    return isinstance(error, PROGRAMMING_ERRORS)


def is_retryable(error: BaseException) -> bool:
    """Whether an exception raised by a handler is worth another attempt (Appendix D).

    An exception's own `retryable` attribute decides when it has one (backends set it: rate limits and
    network errors yes, authentication and bad requests no). Otherwise OrchestraError (bad input,
    configuration, validation) and programming errors (`is_programming_error`) are terminal and anything
    else (an OSError, a provider's error) is treated as transient.
    """
    flag = getattr(error, "retryable", None)
    if isinstance(flag, bool):
        return flag
    return not isinstance(error, OrchestraError) and not is_programming_error(error)
