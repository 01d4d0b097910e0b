"""CommitMessageGenerator port: writes a commit message for an agent turn's changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.immutable import str_tuple
from orchestra_core.model.pricing import ModelUsage

OnUsage = Callable[[ModelUsage], None]


@frozen
class CommitMessageRequest:
    """What the generator sees about one per-turn commit in one repo.

    Attributes:
        diff: The staged unified diff, already cut down to a size a cheap model handles.
        intent: What the agent said it was doing (its last assistant message), possibly shortened.
        files: The repo-relative files in the commit.
        repo: The repo's name in orchestra.yaml.
        node_id: The pipeline node whose agent made the changes.
        diff_truncated: Whether `diff` was cut down.
    """

    diff: str
    intent: str
    files: tuple[str, ...] = field(converter=str_tuple)
    repo: str = ""
    node_id: str = ""
    diff_truncated: bool = False


@runtime_checkable
class CommitMessageGenerator(Protocol):
    """Produces commit message text; the workspace cleans it and falls back when it is unusable.

    A generator that calls a model may take the keyword `on_usage` and report each call's model and tokens to it,
    so the run counts what commit messages cost (callers pass it only to generators that take it).
    """

    def generate(self, request: CommitMessageRequest) -> str:
        """Write a commit message: an imperative summary line, a blank line, a short body.

        A generator whose model has fallbacks may take the keyword `on_failover` too (a callable given each
        `orchestra_core.model.failover.ModelFailover`); the caller passes it only to a generator that takes it.

        Args:
            request: The diff, the agent's intent and the files.

        Returns:
            The raw message text (the caller strips preambles, fences, quotes and trailers).

        Raises:
            Exception: Any failure; the caller falls back to a deterministic message.
        """
        ...
