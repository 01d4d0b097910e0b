"""Backend selection through the composition root: per node, per pipeline, and simulate runs with LLM nodes."""

from __future__ import annotations

from pathlib import Path

import orchestra_core as oc
from orchestra_adapters.container import build_container, close_container, run_arguments
from orchestra_adapters.dependency_injection import providers
from orchestra_core.engine.memory import MemoryRunDirectories
from orchestra_core.testing.session_store import InMemorySessionStore

PIPELINE = """
digraph mixed {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan"]
    write [prompt="Write", backend="direct"]
    check [prompt="Check", backend="simulate"]
    start -> plan -> write -> check -> done
}
"""
CASSETTE = "nodes:\n  plan:\n    - content: 'planned by the model'\n  write:\n    - content: 'written by the model'\n"


def _container(tmp_path: Path, **settings: object):  # type: ignore[no-untyped-def]
    (tmp_path / "cassette.yaml").write_text(CASSETTE)
    config = {"providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}}, **settings}
    container = build_container(config=config, project_root=tmp_path)
    container.session_store.override(providers.Object(InMemorySessionStore()))
    directories = MemoryRunDirectories()
    container.run_directories.override(providers.Object(directories))
    return container, directories


def _responses(directories: MemoryRunDirectories, result: oc.RunResult, *nodes: str) -> list[str]:
    opened = directories.opened[result.logs_root]
    return [opened.stage_files(node)["response.md"] for node in nodes]


def test_a_simulated_run_still_runs_the_nodes_that_name_an_llm_backend(tmp_path: Path) -> None:
    container, directories = _container(tmp_path, backend="simulate")
    graph = oc.parse_pipeline(PIPELINE)
    try:
        arguments = run_arguments(container, graph=graph)
        assert arguments["commit_messages"] is None  # the run itself is simulated
        result = oc.run_pipeline(graph, **arguments)
    finally:
        close_container(container)
    assert result.succeeded
    assert _responses(directories, result, "plan", "write", "check") == [
        "[Simulated] Response for stage: plan",
        "written by the model",
        "[Simulated] Response for stage: check",
    ]


def test_without_the_graph_a_simulated_run_has_no_backend_at_all(tmp_path: Path) -> None:
    container, _ = _container(tmp_path, backend="simulate")
    try:
        assert run_arguments(container)["backend"] is None
        assert run_arguments(container, graph=oc.parse_pipeline(PIPELINE), llm=False)["backend"] is None
    finally:
        close_container(container)


def test_a_node_naming_simulate_is_simulated_in_an_llm_run(tmp_path: Path) -> None:
    container, directories = _container(tmp_path, backend="direct")
    graph = oc.parse_pipeline(PIPELINE)
    try:
        result = oc.run_pipeline(graph, **run_arguments(container, graph=graph))
    finally:
        close_container(container)
    assert _responses(directories, result, "plan", "write", "check") == [
        "planned by the model",
        "written by the model",
        "[Simulated] Response for stage: check",
    ]


def test_the_pipelines_backend_applies_when_none_is_asked_for(tmp_path: Path) -> None:
    container, directories = _container(tmp_path, backend="direct", pipelines={"mixed": {"backend": "simulate"}})
    graph = oc.parse_pipeline(PIPELINE)
    try:
        arguments = run_arguments(container, graph=graph)
        assert container.backend_name() == "simulate"
        result = oc.run_pipeline(graph, **arguments)
    finally:
        close_container(container)
    assert _responses(directories, result, "plan", "write") == [
        "[Simulated] Response for stage: plan",
        "written by the model",
    ]
    explicit, _ = _container(tmp_path, backend="direct", pipelines={"mixed": {"backend": "simulate"}})
    explicit.config.backend.from_value("direct")
    run_arguments(explicit, graph=graph)
    assert explicit.backend_name() == "direct"  # an explicit choice (--backend) wins
    close_container(explicit)
