"""The diagnostic model of validation (Attractor 7.1) and the lint rule interface (7.4)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from typing import Protocol, cast, runtime_checkable

from attrs import field, frozen

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.graph import Graph


class Severity(StrEnum):
    """How bad a diagnostic is; errors stop a pipeline from running."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


def _edge(edge: Iterable[str] | None) -> tuple[str, str] | None:
    return None if edge is None else cast("tuple[str, str]", tuple(edge))


@frozen
class Diagnostic:
    """One finding of a lint rule.

    The location is `node_id` / `edge`, shown once by whoever prints the diagnostic (`location`): a
    message a rule starts with its own location (`node a: ...`, `edge a -> b enters ...`) is stored
    without it, so no output reads "node a: node a: ...".

    Attributes:
        rule: The rule's name, e.g. `start_node`.
        severity: error, warning or info.
        message: What is wrong, without the location (`location` names the node or edge).
        node_id: The node concerned, if any.
        edge: The edge concerned as (from, to), if any.
        fix: How to fix it, if the rule knows.
    """

    rule: str
    severity: Severity = field(converter=Severity)
    message: str
    node_id: str | None = None
    edge: tuple[str, str] | None = field(default=None, converter=_edge)
    fix: str | None = None

    def __attrs_post_init__(self) -> None:
        message = _without_location(self.message, self.location)
        if message != self.message:
            object.__setattr__(self, "message", message)

    @property
    def location(self) -> str:
        """`node X`, `edge A -> B` or `graph`, for display."""
        if self.edge is not None:
            return f"edge {self.edge[0]} -> {self.edge[1]}"
        if self.node_id is not None:
            return f"node {self.node_id}"
        return "graph"


def _without_location(message: str, location: str) -> str:
    """`message` less a leading `location: ` or `location ` (the rest capitalised as it was)."""
    for prefix in (f"{location}: ", f"{location} "):
        if location != "graph" and message.startswith(prefix) and len(message) > len(prefix):
            return message[len(prefix) :]
    return message


@runtime_checkable
class LintRule(Protocol):
    """A validation rule: a name and a check over the whole graph."""

    @property
    def name(self) -> str:
        """The rule's name, as diagnostics report it."""
        ...

    def apply(self, graph: Graph) -> list[Diagnostic]:
        """Check the graph.

        Args:
            graph: The pipeline after transforms.

        Returns:
            The rule's findings, empty when the graph passes.
        """
        ...


@frozen
class FunctionRule:
    """A lint rule made from a function that yields diagnostics."""

    name: str
    check: Callable[[Graph], Iterable[Diagnostic]]

    def apply(self, graph: Graph) -> list[Diagnostic]:
        return list(self.check(graph))


class ValidationError(OrchestraError):
    """The graph has error-severity diagnostics; `diagnostics` holds every finding."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        errors = self.errors
        lines = "; ".join(f"{d.rule}: {d.location}: {d.message}" for d in errors)
        noun = "error" if len(errors) == 1 else "errors"
        super().__init__(f"pipeline is not valid ({len(errors)} {noun}): {lines}")

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)
