"""Pipeline validation (Attractor section 7): the built-in lint rules, `validate` and `validate_or_raise`."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from orchestra_core.model.graph import Graph
from orchestra_core.validation.attributes import ATTRIBUTE_RULES
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, LintRule, Severity, ValidationError
from orchestra_core.validation.dialects import DIALECT_RULES
from orchestra_core.validation.flow import FLOW_RULES
from orchestra_core.validation.handler_settings import VALUE_RULES
from orchestra_core.validation.loops import LOOP_RULES
from orchestra_core.validation.names import name_rules
from orchestra_core.validation.queues import QUEUE_RULES
from orchestra_core.validation.semantics import BUILT_IN_HANDLER_TYPES, SEMANTIC_RULES, TypeKnownRule
from orchestra_core.validation.structure import STRUCTURE_RULES

__all__ = [
    "BUILT_IN_HANDLER_TYPES",
    "Diagnostic",
    "FunctionRule",
    "LintRule",
    "Severity",
    "ValidationError",
    "built_in_rules",
    "validate",
    "validate_or_raise",
]


def built_in_rules(known_types: Collection[str] | None = None) -> list[LintRule]:
    """Every built-in rule, in the order they run.

    Args:
        known_types: Handler types the engine has registered (default: the built-in handlers).
    """
    return [
        *STRUCTURE_RULES,
        *FLOW_RULES,
        *SEMANTIC_RULES,
        TypeKnownRule(known_types),
        *ATTRIBUTE_RULES,
        *VALUE_RULES,
        *DIALECT_RULES,
        *LOOP_RULES,
        *QUEUE_RULES,
        *name_rules(BUILT_IN_HANDLER_TYPES),
    ]


def validate(
    graph: Graph, extra_rules: Iterable[LintRule] | None = None, known_types: Collection[str] | None = None
) -> list[Diagnostic]:
    """Run the built-in rules, then `extra_rules`, and return every diagnostic in rule order.

    Args:
        graph: The pipeline after transforms.
        extra_rules: Custom rules appended to the built-in ones.
        known_types: Handler types the engine has registered (default: the built-in handlers).
    """
    rules = [*built_in_rules(known_types), *(extra_rules or ())]
    return [diagnostic for rule in rules for diagnostic in rule.apply(graph)]


def validate_or_raise(
    graph: Graph, extra_rules: Iterable[LintRule] | None = None, known_types: Collection[str] | None = None
) -> list[Diagnostic]:
    """Like `validate`, but raise when any diagnostic is an error.

    Raises:
        ValidationError: At least one error-severity diagnostic; it carries all the diagnostics.
    """
    diagnostics = validate(graph, extra_rules, known_types)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise ValidationError(diagnostics)
    return diagnostics
