"""The public run functions: events in-process, resume and replay, streams, extensions, adapter overrides."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import orchestra_core as oc
from orchestra_adapters.container import build_container, close_container, run_arguments
from orchestra_adapters.dependency_injection import providers
from orchestra_core.engine.memory import MemoryRunDirectories
from orchestra_core.model import events as ev
from orchestra_core.model import workspace_events as ws
from orchestra_core.testing.backends import ScriptedCodergenBackend
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.git_repos import git
from tests.support.orchestra_project import copy_example

STEPS = """
digraph steps {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt="A"]; b [prompt="B"]
    start -> a -> b -> done
}
"""
GATE = """
digraph gate {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [prompt="A"]
    ask [shape=hexagon, label="Ship it?"]
    b [prompt="B"]
    start -> a -> ask
    ask -> b [label="[Y] Yes"]
    b -> done
}
"""


class _Interrupting:
    """An interviewer whose human pressed Ctrl-C."""

    def ask(self, question: Any) -> Any:
        raise KeyboardInterrupt

    def ask_multiple(self, questions: Any) -> list[Any]:
        raise KeyboardInterrupt

    def inform(self, message: str, stage: str) -> None:
        return None


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    project = copy_example("quickstart", tmp_path / "demo")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Start")
    return project


def test_subscribers_see_engine_and_workspace_events_and_agent_turns_as_the_store_records_them(
    quickstart: Path,
) -> None:
    container = build_container(config_path=quickstart / "orchestra.yaml", cwd=quickstart)
    seen: list[oc.RunEvent] = []
    try:
        result = oc.run_pipeline(
            oc.load_pipeline(quickstart / "pipeline.dot"), on_event=seen.append, **run_arguments(container)
        )
        recorded = oc.read_session(container.session_store(), result.session_id)
    finally:
        close_container(container)
    assert result.succeeded
    kinds = [type(event) for event in seen]
    assert kinds[0] is ws.SessionBranchCreated and kinds[1] is ws.WorktreeCreated
    assert kinds.index(ev.PipelineStarted) < kinds.index(ev.AgentTurnCompleted) < kinds.index(ev.PipelineCompleted)
    turns = [(e.node_id, e.turn.turn_number, e.turn.git_sha) for e in seen if isinstance(e, ev.AgentTurnCompleted)]
    stored = [(v.record.node_id, v.record.turn_number, v.record.git_sha) for v in recorded if isinstance(v.record, oc.AgentTurn)]
    assert turns == stored and len(turns) == 6
    commits = [e.sha for e in seen if isinstance(e, ws.AgentCommitCreated)]
    assert commits == [sha for _, _, sha in turns if sha]
    assert [v.record.sha for v in recorded if isinstance(v.record, ws.AgentCommitCreated)] == commits


def test_a_subscriber_that_raises_does_not_break_the_run() -> None:
    def broken(event: oc.RunEvent) -> None:
        raise RuntimeError("subscriber bug")

    assert oc.run_pipeline(oc.parse_pipeline(STEPS), on_event=broken).succeeded


def test_an_invalid_pipeline_raises_before_anything_is_recorded() -> None:
    store = InMemorySessionStore()
    graph = oc.parse_pipeline("digraph bad { a -> b }")
    with pytest.raises(oc.ValidationError, match="start"):
        oc.run_pipeline(graph, store=store)
    assert store.list_sessions() == []


def test_a_custom_backend_and_handler_run_and_are_recorded() -> None:
    class Deploy:
        def execute(self, node: oc.Node, context: oc.Context, graph: oc.Graph, stage: oc.StageRun) -> oc.Outcome:
            return oc.Outcome.success(context_updates={"deployed": node.attrs["target"]})

    extensions = oc.Extensions()
    extensions.register_handler("deploy", Deploy())
    graph = oc.parse_pipeline(
        "digraph d { start [shape=Mdiamond]; done [shape=Msquare]; w [prompt=W];"
        " ship [type=deploy, target=prod]; start -> w -> ship -> done }",
        extensions=extensions,
    )
    assert [d.rule for d in oc.validate(graph)] == ["type_known"]  # unknown without the extension
    store = InMemorySessionStore()
    backend = ScriptedCodergenBackend({"w": "text:written"})
    result = oc.run_pipeline(graph, store=store, backend=backend, extensions=extensions)
    assert result.context["deployed"] == "prod" and result.context["last_response"] == "written"
    assert oc.read_session(store, result.session_id)[-1].record.event.value == "completed"  # type: ignore[union-attr]


def test_an_interrupted_run_resumes_where_it_stopped() -> None:
    store = InMemorySessionStore()
    backend = ScriptedCodergenBackend()
    graph = oc.parse_pipeline(GATE)
    with pytest.raises(KeyboardInterrupt):
        oc.run_pipeline(graph, store=store, backend=backend, interviewer=_Interrupting())
    (session,) = store.list_sessions()
    assert session.status is oc.SessionStatus.INTERRUPTED
    from orchestra_core.interview import AutoApproveInterviewer

    resumed = oc.resume_session(session.session_id, store=store, backend=backend, interviewer=AutoApproveInterviewer())
    assert resumed.succeeded and resumed.session_id == session.session_id
    assert backend.visits("a") == 1 and backend.visits("b") == 1  # `a` was not run again


def test_replay_forks_at_a_turn_and_leaves_the_original() -> None:
    store = InMemorySessionStore()
    graph = oc.parse_pipeline(STEPS)
    first = oc.run_pipeline(graph, store=store)
    before = len(oc.read_session(store, first.session_id))
    after_a = next(v for v in oc.read_session(store, first.session_id) if v.type_id.endswith("Checkpoint") and v.node_id == "a")
    fork = oc.replay_session(first.session_id, after_a.turn_id, store=store)
    assert fork.succeeded and fork.session_id != first.session_id
    assert len(oc.read_session(store, first.session_id)) == before
    assert store.get_session(fork.session_id).metadata.parent_session_id == first.session_id


def test_the_sync_stream_yields_the_events_then_the_result() -> None:
    stream = oc.stream_pipeline(oc.parse_pipeline(STEPS))
    names = [type(event).__name__ for event in stream]
    assert names[0] == "PipelineStarted" and names[-1] == "PipelineCompleted"
    assert stream.result.completed_nodes == ("start", "a", "b", "done")


def test_a_stream_raises_the_runs_error_after_its_events() -> None:
    stream = oc.stream_pipeline(oc.parse_pipeline("digraph bad { a -> b }"))
    with pytest.raises(oc.ValidationError):
        list(stream)


def test_the_async_variants_give_the_events_on_the_loop_and_the_result() -> None:
    graph = oc.parse_pipeline(STEPS)

    async def main() -> tuple[list[str], oc.RunResult, oc.RunResult]:
        stream = oc.astream_pipeline(graph)
        names = [type(event).__name__ async for event in stream]
        seen: list[str] = []
        awaited = await oc.arun_pipeline(graph, on_event=lambda event: seen.append(type(event).__name__))
        assert seen == names
        return names, await stream.result(), awaited

    names, streamed, awaited = asyncio.run(main())
    assert names.count("StageCompleted") == 4
    assert streamed.succeeded and awaited.succeeded


def test_every_port_of_the_container_can_be_overridden(quickstart: Path) -> None:
    container = build_container(config_path=quickstart / "orchestra.yaml", cwd=quickstart, backend="simulate")
    store, directories = InMemorySessionStore(), MemoryRunDirectories()
    container.session_store.override(providers.Object(store))
    container.run_directories.override(providers.Object(directories))
    graph = oc.parse_pipeline(STEPS)
    result = oc.run_pipeline(graph, **run_arguments(container))
    assert [s.session_id for s in store.list_sessions()] == [result.session_id]
    assert directories.opened[result.logs_root].stage_files("a")["response.md"].startswith("[Simulated]")
    assert not (quickstart / ".orchestra" / "orchestra.db").exists()
    close_container(container)


def test_a_settings_dict_builds_the_container(tmp_path: Path) -> None:
    container = build_container(config={"storage": {"path": "elsewhere/runs.db"}}, project_root=tmp_path)
    result = oc.run_pipeline(oc.parse_pipeline(STEPS), **run_arguments(container))
    close_container(container)
    assert result.succeeded and (tmp_path / "elsewhere" / "runs.db").is_file()
    with pytest.raises(oc.ConfigError, match="storag: unknown key"):
        build_container(config={"storag": {}}, project_root=tmp_path).settings()


def test_registered_tools_join_the_runs_tool_registry(tmp_path: Path) -> None:
    from orchestra_core.runs.pipeline_run import PipelineRun
    from orchestra_core.runs.ports import RunOptions, RunPorts
    from orchestra_core.runs.start import SessionStart
    from orchestra_core.session.checkpoints import PipelineSource

    extensions = oc.Extensions()

    @extensions.register_tool("word-count")
    def word_count(repo: Any, path: str) -> str:
        """Count words."""
        return path

    @extensions.register_tool("migrate", repo="project")
    def migrate(repo: Any) -> str:
        """Migrate."""
        return "ok"

    @extensions.register_tool("integration-tests", cross_repo=True)
    def integration(repos: Any) -> str:
        """Run them."""
        return "ok"

    start = SessionStart("new", "", "", PipelineSource())
    with PipelineRun(oc.parse_pipeline(STEPS), start, RunPorts(), RunOptions(project_root=tmp_path), extensions) as run:
        names = run.resolver.registry.names(["project", "docs"])
    assert {"project:word-count", "docs:word-count", "project:migrate", "integration-tests"} <= set(names)
    assert "docs:migrate" not in names
