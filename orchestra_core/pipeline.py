"""Pipeline preparation (Attractor 9.1): load, transform and validate; shared by `compile` and `run`."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence

from attrs import field, frozen

from orchestra_core.graph.dot_loader import load_pipeline
from orchestra_core.model.graph import Graph
from orchestra_core.transforms import Transform, apply_transforms
from orchestra_core.validation import Diagnostic, LintRule, Severity, validate


def _diagnostics(items: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(items)


@frozen
class PreparedPipeline:
    """A graph after transforms and what validation found in it."""

    graph: Graph
    diagnostics: tuple[Diagnostic, ...] = field(converter=_diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """The error-severity diagnostics; a pipeline with any must not run."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def valid(self) -> bool:
        """Whether the pipeline has no errors (warnings allowed)."""
        return not self.errors


def prepare_pipeline(
    source: Graph | str | os.PathLike[str],
    *,
    transforms: Sequence[Transform] = (),
    extra_rules: Sequence[LintRule] = (),
    known_types: Collection[str] | None = None,
) -> PreparedPipeline:
    """Load a pipeline (unless given a Graph), apply the transforms and validate the result.

    Validation problems never raise: look at `.errors`.

    Args:
        source: A Graph, or the path of a DOT file.
        transforms: Custom transforms, run in order after the built-in ones.
        extra_rules: Custom lint rules, run after the built-in ones.
        known_types: Handler types the engine has registered (default: the built-in handlers).

    Raises:
        PipelineLoadError: The file cannot be read or is not valid DOT of the supported subset.
        TransformError: A custom transform returned something other than a Graph.
    """
    graph = source if isinstance(source, Graph) else load_pipeline(source)
    transformed = apply_transforms(graph, transforms)
    return PreparedPipeline(transformed, validate(transformed, extra_rules, known_types))
