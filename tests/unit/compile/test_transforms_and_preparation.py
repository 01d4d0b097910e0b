"""Attractor 9.1-9.3 and 11.11: built-in and custom transforms, and prepare_pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_core.graph import Graph, parse_dot, to_dot
from orchestra_core.model.errors import PipelineLoadError
from orchestra_core.pipeline import PreparedPipeline, prepare_pipeline
from orchestra_core.transforms import (
    BUILT_IN_TRANSFORMS,
    StylesheetTransform,
    Transform,
    TransformError,
    TransformRegistry,
    VariableExpansionTransform,
    apply_transforms,
)
from orchestra_core.validation import Diagnostic, FunctionRule

PIPELINE = """digraph P {
    graph [goal="Ship the feature", model_stylesheet="* { llm_model: worker; }"]
    start [shape=Mdiamond]
    plan [prompt="Plan: $goal. Then $goals and $goal_text stay; $goal again."]
    exit [shape=Msquare]
    start -> plan -> exit
}"""


class Tag:
    """A custom transform that appends its name to every node's `tags` attribute."""

    def __init__(self, name: str) -> None:
        self.name = name

    def apply(self, graph: Graph) -> Graph:
        return graph.replace_nodes(
            n.with_attrs_map({"tags": (n.attrs.get("tags", "") + " " + self.name).strip()})
            for n in graph.nodes.values()
        )


def test_11_12_goal_variable_expansion_in_prompts() -> None:
    graph = VariableExpansionTransform().apply(parse_dot(PIPELINE))
    assert (
        graph.nodes["plan"].prompt
        == "Plan: Ship the feature. Then $goals and $goal_text stay; Ship the feature again."
    )


def test_goal_with_backslashes_and_dollars_is_inserted_literally() -> None:
    graph = parse_dot('digraph G { goal="fix C:\\\\temp\\\\1 for $5"\n a [prompt="Do $goal"] }')
    assert VariableExpansionTransform().apply(graph).nodes["a"].prompt == "Do fix C:\\temp\\1 for $5"


def test_goal_left_in_place_when_the_graph_has_none() -> None:
    graph = parse_dot('digraph G { a [prompt="Do $goal"] }')
    assert VariableExpansionTransform().apply(graph) is graph


def test_11_12_stylesheet_applies_model_override_by_shape() -> None:
    graph = parse_dot(
        'digraph G { model_stylesheet="box { llm_model: boxy; } diamond { llm_model: pointy; }"\n'
        "a\nb [shape=diamond]\nc [shape=hexagon] }"
    )
    styled = StylesheetTransform().apply(graph)
    assert [styled.nodes[n].llm_model for n in "abc"] == ["boxy", "pointy", ""]


def test_11_11_transforms_never_mutate_the_input_graph() -> None:
    graph = parse_dot(PIPELINE)
    before = to_dot(graph)
    result = apply_transforms(graph, [Tag("t")])
    assert to_dot(graph) == before
    assert result is not graph
    assert graph.nodes["plan"].prompt.startswith("Plan: $goal")
    assert "llm_model" not in graph.nodes["plan"].attrs


def test_11_11_custom_transforms_run_after_built_ins_in_registration_order() -> None:
    seen: list[str] = []

    class Spy:
        def apply(self, graph: Graph) -> Graph:
            seen.append(
                graph.nodes["plan"].attrs.get("llm_model", "")
                + "|"
                + graph.nodes["plan"].attrs.get("tags", "")
            )
            return graph

    registry = TransformRegistry()
    registry.register(Tag("first"))
    registry.register(Tag("second"))
    registry.register(Spy())
    result = registry.apply(parse_dot(PIPELINE))
    assert seen == ["worker|first second"]
    assert result.nodes["plan"].attrs["tags"] == "first second"
    assert registry.transforms[: len(BUILT_IN_TRANSFORMS)] == BUILT_IN_TRANSFORMS
    assert all(isinstance(t, Transform) for t in registry.transforms)


def test_11_11_a_transform_can_modify_the_graph_between_parsing_and_validation() -> None:
    class AddExit:
        def apply(self, graph: Graph) -> Graph:
            return parse_dot(to_dot(graph).replace("}", "exit [shape=Msquare]\nwork -> exit\n}"))

    graph = parse_dot("digraph G { start [shape=Mdiamond]\nwork [prompt=w]\nstart -> work }")
    assert prepare_pipeline(graph).errors
    assert not prepare_pipeline(graph, transforms=[AddExit()]).errors


def test_a_transform_returning_something_else_is_a_clear_error() -> None:
    class Broken:
        def apply(self, graph: Graph) -> Graph:
            return None  # type: ignore[return-value]

    with pytest.raises(TransformError, match="transform Broken returned NoneType, not a Graph"):
        apply_transforms(parse_dot(PIPELINE), [Broken()])


def test_prepare_pipeline_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "p.dot"
    path.write_text(PIPELINE, encoding="utf-8")
    prepared = prepare_pipeline(path)
    assert isinstance(prepared, PreparedPipeline)
    assert prepared.graph.nodes["plan"].llm_model == "worker"
    assert prepared.graph.source_path == str(path)
    assert prepared.diagnostics == () and prepared.errors == () and prepared.valid
    assert prepare_pipeline(str(path)) == prepared


def test_prepare_pipeline_propagates_load_errors(tmp_path: Path) -> None:
    with pytest.raises(PipelineLoadError, match="file not found"):
        prepare_pipeline(tmp_path / "missing.dot")


def test_prepare_pipeline_reports_validation_problems_without_raising() -> None:
    prepared = prepare_pipeline(parse_dot("digraph G { a [prompt=x, max_retries=lots] }"))
    assert not prepared.valid
    assert {d.rule for d in prepared.errors} == {"start_node", "terminal_node", "attribute_type", "orphan_node"}
    assert all(d.severity == "error" for d in prepared.errors)


def test_prepare_pipeline_passes_extra_rules_and_known_types() -> None:
    graph = parse_dot(
        "digraph G { start [shape=Mdiamond]\nx [type=deploy]\nexit [shape=Msquare]\nstart -> x -> exit }"
    )
    rule = FunctionRule("always", lambda g: [Diagnostic("always", "info", "checked")])
    prepared = prepare_pipeline(graph, extra_rules=[rule], known_types={"start", "exit", "deploy"})
    assert [d.rule for d in prepared.diagnostics] == ["always"]
    assert [d.rule for d in prepare_pipeline(graph).diagnostics] == ["type_known"]
