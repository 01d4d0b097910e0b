"""Compile-time checks of backends: every `backend` named is one Orchestra has, every CLI agent in use is found,
and every `agent.workdir` a CLI agent reads names a workspace repo."""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Callable, Iterator

from orchestra_adapters.backends.registry import (
    ACP_BACKEND,
    BACKEND_NAMES,
    CLI_AGENT_BACKENDS,
    cli_agent_command,
    find_acp_agent,
    find_cli_agent,
    settings_key,
)
from orchestra_adapters.backends.routing import node_backend
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.validation import Diagnostic, FunctionRule, LintRule, Severity

# The repo a CLI agent works in (cli_agent/backend.py reads it; not imported here: it loads the agents' libraries).
WORKDIR_ATTR = "agent.workdir"
# Handlers that hand their node to the backend (fan-in only to rank, with a prompt).
_BACKEND_HANDLERS = ("codergen", "parallel.fan_in")


def run_backend(settings: OrchestraSettings, pipeline: str, requested: str | None = None) -> str:
    """The backend a run of `pipeline` uses for nodes that name none: `requested` (`--backend`), else
    `pipelines.<name>.backend`, else `backend`, else `langgraph` with providers, else `simulate`."""
    chosen = requested or settings.backend_for(pipeline)
    if chosen:
        return str(chosen)
    return "langgraph" if settings.providers.entries else "simulate"


def backends_in_use(graph: Graph, default: str) -> dict[str, list[str]]:
    """Each backend the graph's nodes run with (their own `backend`, else `default`) and those nodes."""
    used: dict[str, list[str]] = {}
    for node in graph.nodes.values():
        if _uses_backend(node):
            used.setdefault(node_backend(node) or default, []).append(node.id)
    return used


def backend_lint_rules(
    settings: OrchestraSettings,
    *,
    requested: str | None = None,
    which: Callable[[str], str | None] = shutil.which,
    check_run_backend: bool = True,
) -> list[LintRule]:
    """`backend_known` (a node's `backend`, orchestra.yaml's `backend` or `pipelines.<name>.backend`, or
    `--backend` is not a backend Orchestra has) and
    `cli_agent_executable` (a CLI agent backend in use whose executable is not found) and `agent_workdir`
    (a node a CLI agent runs names in `agent.workdir` no repo of `workspace.repos`); all errors.

    Args:
        settings: orchestra.yaml's settings (`backend`, `pipelines`, `claude_code`, `codex`).
        requested: The backend asked for on the command line (`run --backend`), if any.
        which: Finds a command on PATH.
        check_run_backend: Also report unknown backends in orchestra.yaml and `requested` (`orchestra run`
            refuses its own on its own).
    """

    def known(graph: Graph) -> Iterator[Diagnostic]:
        if check_run_backend and requested and requested not in BACKEND_NAMES:
            yield Diagnostic(
                rule="backend_known",
                severity=Severity.ERROR,
                message=f"--backend {requested!r} is not a backend{_hint(requested)}; known: {_KNOWN}",
                fix=f"use --backend with one of {_KNOWN}",
            )
        if check_run_backend:
            for message, fix in config_backend_problems(settings):
                yield Diagnostic(rule="backend_known", severity=Severity.ERROR, message=message, fix=fix)
        for node in graph.nodes.values():
            name = node_backend(node)
            if name is not None and name not in BACKEND_NAMES:
                yield Diagnostic(
                    rule="backend_known",
                    severity=Severity.ERROR,
                    message=f"unknown backend {name!r}{_hint(name)}; known: {_KNOWN}",
                    node_id=node.id,
                    fix=f"set backend to one of {_KNOWN}, or remove it to use the run's",
                )

    def executables(graph: Graph) -> Iterator[Diagnostic]:
        used = backends_in_use(graph, run_backend(settings, graph.name, requested))
        for name in CLI_AGENT_BACKENDS:
            nodes = used.get(name)
            if not nodes or find_cli_agent(name, settings, which) is not None:
                continue
            own = [node_id for node_id in nodes if node_backend(graph.nodes[node_id]) == name]
            yield Diagnostic(
                rule="cli_agent_executable",
                severity=Severity.ERROR,
                message=(
                    f"the {name} backend runs node(s) {', '.join(nodes)}, but its executable "
                    f"{cli_agent_command(name, settings)!r} is not found"
                ),
                node_id=own[0] if own else None,
                fix=f"install it or set {settings_key(name)}.command in orchestra.yaml",
            )
        yield from acp_executable(graph, used.get(ACP_BACKEND))

    def acp_executable(graph: Graph, nodes: list[str] | None) -> Iterator[Diagnostic]:
        if not nodes:
            return
        command = settings.acp.command
        if command and find_acp_agent(settings, which) is not None:
            return
        own = [node_id for node_id in nodes if node_backend(graph.nodes[node_id]) == ACP_BACKEND]
        problem = f"its program {command[0]!r} is not found" if command else "acp.command is not set"
        yield Diagnostic(
            rule="cli_agent_executable",
            severity=Severity.ERROR,
            message=f"the {ACP_BACKEND} backend runs node(s) {', '.join(nodes)}, but {problem}",
            node_id=own[0] if own else None,
            fix="set acp.command in orchestra.yaml to the agent's program and arguments (e.g. [gemini, --experimental-acp])",
        )

    def workdirs(graph: Graph) -> Iterator[Diagnostic]:
        used = backends_in_use(graph, run_backend(settings, graph.name, requested))
        repos = tuple(settings.workspace.repos)
        for name in (*CLI_AGENT_BACKENDS, ACP_BACKEND):
            for node_id in used.get(name, ()):
                wanted = graph.nodes[node_id].attrs.get(WORKDIR_ATTR, "").strip()
                if wanted and wanted not in repos:
                    yield Diagnostic(
                        rule="agent_workdir",
                        severity=Severity.ERROR,
                        message=f"{WORKDIR_ATTR}={wanted!r} names no repo of workspace.repos ({', '.join(repos) or 'none'})",
                        node_id=node_id,
                        fix=f"name one of workspace.repos in {WORKDIR_ATTR}, or remove it to use the first repo",
                    )

    return [
        FunctionRule("backend_known", known),
        FunctionRule("cli_agent_executable", executables),
        FunctionRule("agent_workdir", workdirs),
    ]


_KNOWN = ", ".join(BACKEND_NAMES)


def config_backend_problems(settings: OrchestraSettings) -> list[tuple[str, str]]:
    """(message, fix) for each orchestra.yaml `backend` or `pipelines.<name>.backend` naming a backend
    Orchestra does not have (`compile` and `doctor` report them as errors)."""
    named = [("backend", settings.backend)]
    named += [(f"pipelines.{pipeline}.backend", p.backend) for pipeline, p in settings.pipelines.items()]
    where = settings.source_path or "orchestra.yaml"
    return [
        (
            f"orchestra.yaml {key}: {name!r} is not a backend{_hint(name)}; known: {_KNOWN}",
            f"set {key} in {where} to one of {_KNOWN}",
        )
        for key, name in named
        if name and name not in BACKEND_NAMES
    ]


def _hint(name: str) -> str:
    close = difflib.get_close_matches(name.lower(), BACKEND_NAMES, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _uses_backend(node: Node) -> bool:
    if node.handler_type == "codergen":
        return True
    return node.handler_type == "parallel.fan_in" and bool(node.prompt)
