"""The question and answer model of human interaction (Attractor 6.2, 6.3) and accelerator keys."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from attrs import field, frozen

from orchestra_core.model.immutable import frozen_map

_ACCELERATOR_RES = (
    re.compile(r"^\s*\[(\w)\]\s*(.*)$", re.DOTALL),  # [Y] Yes, deploy
    re.compile(r"^\s*(\w)\)\s*(.*)$", re.DOTALL),  # Y) Yes, deploy
    re.compile(r"^\s*(\w)\s+-\s+(.*)$", re.DOTALL),  # Y - Yes, deploy
)


def split_accelerator(label: str) -> tuple[str | None, str]:
    """Split `[K] Label`, `K) Label` or `K - Label` into (key, rest); (None, label) without a prefix."""
    for pattern in _ACCELERATOR_RES:
        match = pattern.match(label)
        if match:
            return match.group(1), match.group(2).strip()
    return None, label


def accelerator_key(label: str) -> str:
    """The shortcut key of a choice label (Attractor 4.6): the prefix key, else the first character."""
    key, rest = split_accelerator(label)
    if key is not None:
        return key.upper()
    stripped = (rest or label).strip()
    return stripped[:1].upper()


def normalize_label(label: str) -> str:
    """Lower-case, trimmed, accelerator prefix removed: how labels are compared (Attractor 3.3)."""
    _, rest = split_accelerator(label)
    return rest.strip().lower()


class QuestionType(StrEnum):
    YES_NO = "yes_no"
    MULTIPLE_CHOICE = "multiple_choice"
    FREEFORM = "freeform"
    CONFIRMATION = "confirmation"


class AnswerValue(StrEnum):
    """The special answer values; a multiple-choice answer's value is the chosen option's key."""

    YES = "yes"
    NO = "no"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"


@frozen
class Option:
    """One choice: its accelerator key (`Y`) and display label (`[Y] Yes, deploy`)."""

    key: str
    label: str



@frozen
class Answer:
    """An answer: `value` is an AnswerValue's string or an option key; `text` holds free text."""

    value: str
    selected_option: Option | None = None
    text: str = ""

    @property
    def is_timeout(self) -> bool:
        return self.value == AnswerValue.TIMEOUT.value

    @property
    def is_skipped(self) -> bool:
        return self.value == AnswerValue.SKIPPED.value

    @classmethod
    def timeout(cls) -> Answer:
        return cls(AnswerValue.TIMEOUT.value)

    @classmethod
    def skipped(cls) -> Answer:
        return cls(AnswerValue.SKIPPED.value)

    @classmethod
    def yes(cls) -> Answer:
        return cls(AnswerValue.YES.value)

    @classmethod
    def no(cls) -> Answer:
        return cls(AnswerValue.NO.value)

    @classmethod
    def choose(cls, option: Option) -> Answer:
        return cls(option.key, selected_option=option, text=option.label)


def _options(items: Iterable[Option]) -> tuple[Option, ...]:
    return tuple(items)


@frozen
class Question:
    """A question for a human.

    Attributes:
        text: What to ask.
        type: Which kind of answer is expected.
        options: The choices of a MULTIPLE_CHOICE question.
        default: What a timeout or skip turns into, when set.
        timeout_seconds: How long to wait; None waits indefinitely.
        stage: The node asking (for display and for answers files).
        metadata: Anything else a frontend may use (the wait.human handler puts each option's target
            node under `targets`, keyed by option key).
    """

    text: str
    type: QuestionType = QuestionType.MULTIPLE_CHOICE
    options: tuple[Option, ...] = field(default=(), converter=_options)
    default: Answer | None = None
    timeout_seconds: float | None = None
    stage: str = ""
    metadata: Mapping[str, Any] = field(factory=dict, converter=frozen_map)

    def find_option(self, reply: str) -> Option | None:
        """The option a reply names by key, label (normalized) or target node id; None when none does."""
        return match_option(self.options, reply, self.metadata.get("targets", {}))


def match_option(options: Sequence[Option], reply: str, targets: Mapping[str, str] | None = None) -> Option | None:
    """Find the option a reply names: its key (any case), its label (normalized) or its target node."""
    wanted = reply.strip()
    if not wanted:
        return None
    for option in options:
        if option.key.lower() == wanted.lower():
            return option
    normalized = normalize_label(wanted)
    for option in options:
        if normalize_label(option.label) == normalized:
            return option
    for option in options:
        if targets and targets.get(option.key) == wanted:
            return option
    return None
