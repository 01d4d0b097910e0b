"""Attractor 11.12 (the cross-feature parity matrix) and 11.13 (the integration smoke test)."""

from __future__ import annotations

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph import Graph, Node
from orchestra_core.interview import Answer, QueueInterviewer
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.context import Context
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.validation import Severity, validate
from tests.support.engine import Harness, graph, linear


def rules(pipeline: Graph) -> dict[str, Severity]:
    return {d.rule: d.severity for d in validate(pipeline)}


# parsing and validation rows


def test_parse_a_simple_linear_pipeline() -> None:
    pipeline = graph("digraph p { start [shape=Mdiamond]; A; B; done [shape=Msquare]; start -> A -> B -> done }")
    assert list(pipeline.nodes) == ["start", "A", "B", "done"]
    assert [(e.source, e.target) for e in pipeline.edges] == [("start", "A"), ("A", "B"), ("B", "done")]


def test_parse_graph_level_attributes() -> None:
    pipeline = graph('digraph p { graph [goal="Ship it", label="Release"]; start [shape=Mdiamond] }')
    assert (pipeline.goal, pipeline.label) == ("Ship it", "Release")


def test_parse_multi_line_node_attributes() -> None:
    pipeline = graph(
        """
        digraph p {
            review [
                shape=box,
                prompt="Review
        carefully",
                max_retries=2
            ]
        }
        """
    )
    review = pipeline.nodes["review"]
    assert (review.shape, review.max_retries) == ("box", 2) and "carefully" in review.prompt


def test_validate_missing_start_node_is_an_error() -> None:
    assert rules(graph("digraph p { a; done [shape=Msquare]; a -> done }")).get("start_node") is Severity.ERROR


def test_validate_missing_exit_node_is_an_error() -> None:
    assert rules(graph("digraph p { start [shape=Mdiamond]; a; start -> a }")).get("terminal_node") is Severity.ERROR


def test_validate_orphan_node_is_an_error() -> None:
    found = rules(graph("digraph p { start [shape=Mdiamond]; done [shape=Msquare]; orphan; start -> done }"))
    assert found.get("orphan_node") is Severity.ERROR


# execution rows


def test_execute_a_linear_three_node_pipeline_end_to_end() -> None:
    result = Harness().run(linear("a", "b", "c"))
    assert result.status is RunStatus.SUCCESS and result.completed_nodes[1:4] == ("a", "b", "c")


def test_execute_with_conditional_branching_on_success_and_fail_paths() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            work; good; bad
            start -> work
            work -> good [condition="outcome=success"]
            work -> bad [condition="outcome=fail"]
            good -> done
            bad -> done
        }
        """
    )
    assert "good" in Harness().run(pipeline).completed_nodes
    assert "bad" in Harness(backend=ScriptedCodergenBackend({"work": "fail"})).run(pipeline).completed_nodes


def test_execute_with_retry_on_failure() -> None:
    backend = ScriptedCodergenBackend({"a": ["fail", "fail", "success"]})
    result = Harness(backend=backend).run(linear("a").replace_nodes([linear("a").nodes["a"].with_attrs(max_retries="2")]))
    assert result.status is RunStatus.SUCCESS and backend.visits("a") == 3


GATED = """
digraph p {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [goal_gate=true]; after
    start -> work -> after -> done
    work -> after [condition="outcome=fail"]
}
"""


def test_goal_gate_blocks_exit_when_unsatisfied() -> None:
    result = Harness(backend=ScriptedCodergenBackend({"work": "fail"})).run(graph(GATED))
    assert result.status is RunStatus.FAIL and "done" not in result.completed_nodes


def test_goal_gate_allows_exit_when_all_satisfied() -> None:
    result = Harness().run(graph(GATED))
    assert result.status is RunStatus.SUCCESS and result.completed_nodes[-1] == "done"


def test_wait_human_presents_choices_and_routes_on_selection() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            gate [shape=hexagon, label="Approve?"]; yes_path; no_path
            start -> gate
            gate -> yes_path [label="[Y] Yes"]
            gate -> no_path [label="[N] No"]
            yes_path -> done
            no_path -> done
        }
        """
    )
    assert "no_path" in Harness(interviewer=QueueInterviewer([Answer("N")])).run(pipeline).completed_nodes


def weighted(edges: str) -> Graph:
    return graph(f"digraph p {{ start [shape=Mdiamond]; done [shape=Msquare]; x; y; z; {edges}; x -> done; y -> done; z -> done }}")


def test_edge_selection_condition_match_wins_over_weight() -> None:
    pipeline = weighted('start -> x [weight=10]; start -> y [condition="outcome=success"]')
    assert Harness().run(pipeline).completed_nodes[1] == "y"


def test_edge_selection_weight_breaks_ties_for_unconditional_edges() -> None:
    assert Harness().run(weighted("start -> x [weight=1]; start -> y [weight=3]")).completed_nodes[1] == "y"


def test_edge_selection_lexical_tiebreak_as_final_fallback() -> None:
    assert Harness().run(weighted("start -> z; start -> y; start -> x")).completed_nodes[1] == "x"


def test_context_updates_from_one_node_are_visible_to_the_next() -> None:
    seen: list[object] = []

    def reads(node: Node, prompt: str, context: Context) -> str:
        seen.append(context.get("context.plan"))
        return "ok"

    backend = ScriptedCodergenBackend({"a": Outcome(StageStatus.SUCCESS, context_updates={"context.plan": "3 steps"}), "b": reads})
    Harness(backend=backend).run(linear("a", "b"))
    assert seen == ["3 steps"]


def test_checkpoint_save_and_resume_produces_the_same_result() -> None:
    pipeline = linear("a", "b", "c")
    harness = Harness()
    full = harness.run(pipeline, root="/r1")
    middle = harness.checkpoints("/r1")[2]
    assert middle.next_node == "b"
    resumed = Harness().run(pipeline, root="/r1", resume_from=middle)
    assert (resumed.status, resumed.completed_nodes) == (full.status, full.completed_nodes)


def test_stylesheet_applies_model_override_to_nodes_by_shape() -> None:
    pipeline = graph(
        """
        digraph p {
            graph [model_stylesheet="box { llm_model: claude-opus-4-6 }"]
            start [shape=Mdiamond]; a; done [shape=Msquare]
            start -> a -> done
        }
        """
    )
    prepared = prepare_pipeline(pipeline)
    assert prepared.graph.nodes["a"].llm_model == "claude-opus-4-6"
    assert Harness().run(prepared.graph).status is RunStatus.SUCCESS


def test_prompt_variable_expansion_of_goal() -> None:
    backend = ScriptedCodergenBackend()
    Harness(backend=backend).run(linear("a", goal="build a CLI", extra=', default_fidelity="full"'))
    assert backend.calls[0].prompt == "do a"
    pipeline = graph('digraph p { graph [goal="build a CLI", default_fidelity="full"]; start [shape=Mdiamond]; a [prompt="Plan: $goal"]; start -> a }')
    Harness(backend=backend).run(pipeline)
    assert backend.calls[-1].prompt == "Plan: build a CLI"


def test_parallel_fan_out_and_fan_in_complete_correctly() -> None:
    pipeline = graph(
        """
        digraph p {
            start [shape=Mdiamond]; done [shape=Msquare]
            fan [shape=component]; a; b; merge [shape=tripleoctagon]
            start -> fan
            fan -> a
            fan -> b
            a -> merge
            b -> merge
            merge -> done
        }
        """
    )
    result = Harness().run(pipeline)
    assert result.status is RunStatus.SUCCESS
    assert {"a", "b", "fan", "merge", "done"} <= set(result.completed_nodes)
    assert result.context["parallel.fan_in.best_id"] == "a"


def test_custom_handler_registration_and_execution() -> None:
    class Deploy:
        def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
            return Outcome.success(f"deployed to {node.get('target')}")

    pipeline = graph('digraph p { start [shape=Mdiamond]; d [type="deploy", target="prod"]; done [shape=Msquare]; start -> d -> done }')
    result = Harness(handlers={"deploy": Deploy()}).run(pipeline)
    assert result.node_outcomes["d"].notes == "deployed to prod"


def test_pipeline_with_more_than_ten_nodes_completes() -> None:
    result = Harness().run(linear(*(f"n{i}" for i in range(15))))
    assert result.status is RunStatus.SUCCESS and len(result.completed_nodes) == 17


# 11.13

SMOKE = """
digraph test_pipeline {
    graph [goal="Create a hello world Python script"]

    start       [shape=Mdiamond]
    plan        [shape=box, prompt="Plan how to create a hello world script for: $goal"]
    implement   [shape=box, prompt="Write the code based on the plan", goal_gate=true]
    review      [shape=box, prompt="Review the code for correctness"]
    done        [shape=Msquare]

    start -> plan
    plan -> implement
    implement -> review [condition="outcome=success"]
    implement -> plan   [condition="outcome=fail", label="Retry"]
    review -> done      [condition="outcome=success"]
    review -> implement [condition="outcome=fail", label="Fix"]
}
"""


def smoke(harness: Harness) -> None:
    pipeline = graph(SMOKE)
    assert pipeline.goal == "Create a hello world Python script"
    assert len(pipeline.nodes) == 5 and len(pipeline.edges) == 6
    assert not [d for d in validate(pipeline) if d.severity is Severity.ERROR]
    result = harness.run(pipeline)
    assert result.status is RunStatus.SUCCESS
    assert "implement" in result.completed_nodes
    directory = harness.directory()
    for node in ("plan", "implement", "review"):
        assert set(directory.stage_files(node)) >= {"prompt.md", "response.md", "status.json"}
    assert result.node_outcomes["implement"].status.is_success
    checkpoint = harness.checkpoints()[-1]
    assert checkpoint.current_node == "done"
    assert {"plan", "implement", "review"} <= set(checkpoint.completed_nodes)


def test_smoke_with_the_simulation_backend() -> None:
    smoke(Harness())


def test_smoke_with_a_scripted_backend_that_fails_and_recovers() -> None:
    backend = ScriptedCodergenBackend({"implement": ["fail", "success", "success"], "review": ["fail", "success"]})
    harness = Harness(backend=backend)
    smoke(harness)
    assert [c.node_id for c in backend.calls] == ["plan", "implement", "plan", "implement", "review", "implement", "review"]
    assert "Create a hello world Python script" in backend.calls[0].prompt
