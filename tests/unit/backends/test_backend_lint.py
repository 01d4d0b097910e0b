"""`backend_known` and `cli_agent_executable` (the CLI agents and `acp`): compile's checks of the backends a pipeline uses."""

from __future__ import annotations

import pytest

from orchestra_adapters.backends.lint import backend_lint_rules, backends_in_use, run_backend
from orchestra_core.graph.dot_loader import parse_dot
from orchestra_core.model.graph import Graph
from orchestra_core.model.settings import AcpSettings, CliAgentSettings, OrchestraSettings, PipelineSettings
from orchestra_core.validation import Diagnostic

MIXED = """
digraph mixed {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan"]
    implement [prompt="Build it", backend="claude-code"]
    review [prompt="Review", backend="codx"]
    start -> plan -> implement -> review -> done
}
"""


def _graph(text: str = MIXED) -> Graph:
    return parse_dot(text, path="p.dot")


def _diagnostics(settings: OrchestraSettings, graph: Graph, **options: object) -> list[Diagnostic]:
    return [d for rule in backend_lint_rules(settings, **options) for d in rule.apply(graph)]  # type: ignore[arg-type]


def _nothing_found(command: str) -> str | None:
    return None


def test_an_unknown_node_backend_names_the_node_and_the_known_ones() -> None:
    [unknown] = [
        d
        for d in _diagnostics(OrchestraSettings(), _graph(), which=_nothing_found)
        if d.rule == "backend_known"
    ]
    assert unknown.node_id == "review" and unknown.severity.value == "error"
    assert unknown.location == "node review"  # named once, by the location, not again in the message
    assert unknown.message == (
        "unknown backend 'codx' (did you mean 'codex'?); known: simulate, langgraph, direct, claude-code, codex, acp"
    )


def test_a_missing_cli_agent_in_use_is_an_error_with_the_hint() -> None:
    found = _diagnostics(OrchestraSettings(), _graph(), which=_nothing_found)
    [missing] = [d for d in found if d.rule == "cli_agent_executable"]
    assert missing.node_id == "implement"
    assert (
        missing.message
        == "the claude-code backend runs node(s) implement, but its executable 'claude' is not found"
    )
    assert missing.fix == "install it or set claude_code.command in orchestra.yaml"
    assert [d.rule for d in _diagnostics(OrchestraSettings(), _graph(), which=lambda c: f"/bin/{c}")] == [
        "backend_known"
    ]


def test_the_configured_command_is_the_one_looked_up() -> None:
    settings = OrchestraSettings(cli_agents={"claude-code": CliAgentSettings(command="my-claude")})
    looked: list[str] = []
    _diagnostics(settings, _graph(), which=lambda c: looked.append(c) or None)
    assert looked == ["my-claude"]


@pytest.mark.parametrize(
    ("settings", "requested"),
    [
        (OrchestraSettings(backend="codex"), None),
        (OrchestraSettings(pipelines={"plain": PipelineSettings(backend="codex")}), None),
        (OrchestraSettings(), "codex"),
    ],
    ids=["global", "pipeline", "requested"],
)
def test_the_runs_backend_counts_as_in_use_for_nodes_without_their_own(
    settings: OrchestraSettings, requested: str | None
) -> None:
    graph = _graph(
        'digraph plain { start [shape=Mdiamond]; done [shape=Msquare]; a [prompt="A"]; start -> a -> done }'
    )
    [missing] = _diagnostics(settings, graph, requested=requested, which=_nothing_found)
    assert missing.rule == "cli_agent_executable" and missing.node_id is None
    assert "codex backend runs node(s) a" in missing.message and "codex.command" in (missing.fix or "")


def test_an_agent_not_in_use_is_not_checked() -> None:
    graph = _graph(
        'digraph plain { start [shape=Mdiamond]; done [shape=Msquare]; a [prompt="A"]; start -> a -> done }'
    )
    settings = OrchestraSettings(cli_agents={"codex": CliAgentSettings(command="nowhere")})
    assert _diagnostics(settings, graph, which=_nothing_found) == []


def test_an_unknown_run_backend_is_reported_unless_the_run_checks_it_itself() -> None:
    settings = OrchestraSettings(backend="langchain")
    graph = _graph(
        'digraph plain { start [shape=Mdiamond]; done [shape=Msquare]; a [prompt="A"]; start -> a -> done }'
    )
    [unknown] = _diagnostics(settings, graph)
    assert unknown.node_id is None and unknown.message == (
        "orchestra.yaml backend: 'langchain' is not a backend; known: simulate, langgraph, direct, claude-code, codex, acp"
    )
    assert _diagnostics(settings, graph, check_run_backend=False) == []


def test_which_nodes_use_which_backend() -> None:
    assert backends_in_use(_graph(), "simulate") == {
        "simulate": ["plan"],
        "claude-code": ["implement"],
        "codx": ["review"],
    }
    assert run_backend(OrchestraSettings(), "p") == "simulate"
    assert run_backend(OrchestraSettings(backend="direct"), "p", "codex") == "codex"


def test_every_unknown_backend_in_orchestra_yaml_and_on_the_command_line_is_an_error() -> None:
    settings = OrchestraSettings(
        backend="codx",
        pipelines={
            "plain": PipelineSettings(backend="langgraf"),
            "other": PipelineSettings(backend="direct"),
        },
    )
    graph = _graph(
        'digraph plain { start [shape=Mdiamond]; done [shape=Msquare]; a [prompt="A"]; start -> a -> done }'
    )
    found = _diagnostics(settings, graph, requested="simulat", which=_nothing_found)
    assert [(d.rule, d.severity.value, d.location) for d in found] == [
        ("backend_known", "error", "graph")
    ] * 3
    assert [d.message.split(";")[0] for d in found] == [
        "--backend 'simulat' is not a backend (did you mean 'simulate'?)",
        "orchestra.yaml backend: 'codx' is not a backend (did you mean 'codex'?)",
        "orchestra.yaml pipelines.plain.backend: 'langgraf' is not a backend (did you mean 'langgraph'?)",
    ]
    assert found[2].fix == (
        "set pipelines.plain.backend in orchestra.yaml to one of simulate, langgraph, direct, claude-code, codex, acp"
    )


def test_an_agent_workdir_a_cli_agent_would_refuse_is_a_compile_error() -> None:
    from orchestra_core.model.settings import RepoSettings, WorkspaceSettings

    pipeline = _graph(MIXED.replace('backend="claude-code"]', 'backend="claude-code", agent.workdir="docs"]'))
    found = [
        d for d in _diagnostics(OrchestraSettings(), pipeline, which=lambda c: c) if d.rule == "agent_workdir"
    ]
    assert [(d.node_id, d.severity.value) for d in found] == [("implement", "error")]
    assert found[0].message == "agent.workdir='docs' names no repo of workspace.repos (none)"
    with_docs = OrchestraSettings(workspace=WorkspaceSettings(repos={"docs": RepoSettings(path="../docs")}))
    assert not [d for d in _diagnostics(with_docs, pipeline, which=lambda c: c) if d.rule == "agent_workdir"]
    langgraph = _graph(MIXED.replace('backend="claude-code"]', 'agent.workdir="docs"]'))
    assert not [
        d
        for d in _diagnostics(OrchestraSettings(), langgraph, which=lambda c: c)
        if d.rule == "agent_workdir"
    ]


ACP = 'digraph a { start [shape=Mdiamond]; done [shape=Msquare]; work [prompt="W", backend="acp"]; start -> work -> done }'


def test_the_acp_backend_in_use_needs_acp_command_and_its_program() -> None:
    [unset] = _diagnostics(OrchestraSettings(), _graph(ACP), which=_nothing_found)
    assert (unset.rule, unset.node_id) == ("cli_agent_executable", "work")
    assert unset.message == "the acp backend runs node(s) work, but acp.command is not set"
    assert "set acp.command in orchestra.yaml" in (unset.fix or "")
    settings = OrchestraSettings(acp=AcpSettings(command=("gemini", "--experimental-acp")))
    looked: list[str] = []
    [missing] = _diagnostics(settings, _graph(ACP), which=lambda c: looked.append(c) or None)
    assert looked == ["gemini"]
    assert missing.message == "the acp backend runs node(s) work, but its program 'gemini' is not found"
    assert _diagnostics(settings, _graph(ACP), which=lambda c: f"/bin/{c}") == []
