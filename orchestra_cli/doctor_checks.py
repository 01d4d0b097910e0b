"""`orchestra doctor`: everything a run depends on, each checked and reported ok, warning or error."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orchestra_cli.doctor_check import ERROR, OK, WARNING, Check

MIN_GIT = (2, 36)  # `git worktree list --porcelain -z`, used to find session worktrees
_GIT_TIMEOUT_S = 10


def run_checks(config: Path | None, cwd: Path) -> list[Check]:
    """Every check, in report order. Nothing is created, apart from the store's type bundle when missing."""
    checks = [_safely("orchestra", _orchestra), _safely("python", _python), _safely("git", _git)]
    git_found = checks[-1][0].status != ERROR
    checks.append(_safely("graphviz", _graphviz))
    config_checks, container = _config(config, cwd)
    checks.append(config_checks)
    if container is None:
        names = ("store", "providers", "repos", "sandbox")
        checks += [[Check(name, WARNING, "not checked: orchestra.yaml is invalid")] for name in names]
    else:
        from orchestra_cli.doctor_repos import repo_checks
        from orchestra_cli.doctor_store import store_checks

        checks.append(_safely("store", lambda: store_checks(container)))
        checks.append(_safely("providers", lambda: _providers(container.settings())))
        checks.append(_safely("backends", lambda: _backends(container.settings())))
        checks.append(_safely("repos", lambda: repo_checks(container, git_found)))
        checks.append(_safely("sandbox", lambda: _sandbox(container.settings())))
        checks.append(_safely("cli agents", lambda: _cli_agents(container.settings())))
        checks.append(_safely("notify", lambda: _notify(container)))
    checks.append(_safely("mcp", _mcp))
    checks.append(_safely("langgraph", lambda: _package("langgraph", "langgraph")))
    checks.append(_safely("langchain-core", lambda: _package("langchain-core", "langchain-core")))
    return [check for group in checks for check in group]


def _backends(settings: Any) -> list[Check]:
    """An error for each orchestra.yaml `backend` / `pipelines.<name>.backend` Orchestra does not have."""
    from orchestra_adapters.backends.lint import config_backend_problems

    return [Check("backends", ERROR, f"{message} ({fix})") for message, fix in config_backend_problems(settings)]


def _cli_agents(settings: Any) -> list[Check]:
    from orchestra_cli.doctor_agents import cli_agent_checks

    return cli_agent_checks(settings)


def _notify(container: Any) -> list[Check]:
    from orchestra_cli.doctor_notify import notify_checks

    return notify_checks(container.settings(), container.project_root())


def _safely(name: str, check: Callable[[], Check | list[Check]]) -> list[Check]:
    """Run a check; one that crashed is an error of that check, not of doctor."""
    try:
        result = check()
    except Exception as error:  # doctor must report, whatever breaks
        return [Check(name, ERROR, f"{type(error).__name__}: {error}")]
    return result if isinstance(result, list) else [result]


# Versions ------------------------------------------------------------------------------------------
def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _orchestra() -> Check:
    return Check("orchestra", OK, _version("orchestra") or "(running from a source tree, not installed)")


def _python() -> Check:
    detail = f"{platform.python_version()} ({sys.executable})"
    return Check("python", OK if sys.version_info >= (3, 11) else ERROR, detail)


def _package(name: str, distribution: str) -> Check:
    version = _version(distribution)
    if version is None:
        return Check(name, WARNING, f"not installed (pip install {distribution}); the langgraph backend needs it")
    return Check(name, OK, version)


def _mcp() -> Check:
    """The MCP library the tool server runs on (CLI agent nodes and `orchestra mcp serve` need it)."""
    version = _version("mcp")
    needed = "CLI agent backends and `orchestra mcp serve` need mcp>=2.3 (pip install 'mcp>=2.3,<3')"
    if version is None:
        return Check("mcp", ERROR, f"library not installed; {needed}")
    major_minor = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if major_minor < (2, 3):
        return Check("mcp", ERROR, f"library {version} is too old; {needed}")
    return Check("mcp", OK, f"library {version}; the tool server is ready (orchestra mcp serve)")


# Tools ---------------------------------------------------------------------------------------------
def _git() -> Check:
    path = shutil.which("git")
    if path is None:
        return Check("git", ERROR, "git not found on PATH (needed for workspaces and `orchestra show`)")
    try:
        result = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check("git", ERROR, f"{path} does not run: {error}")
    text = result.stdout.strip()
    match = re.search(r"(\d+)\.(\d+)", text)
    if result.returncode != 0 or match is None:
        return Check("git", ERROR, f"{path} --version failed: {result.stderr.strip() or text}")
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_GIT:
        wanted = ".".join(map(str, MIN_GIT))
        return Check("git", WARNING, f"{text} ({path}); workspaces need git {wanted} or later")
    return Check("git", OK, f"{text} ({path})")


def _graphviz() -> Check:
    try:
        import pygraphviz
    except ImportError as error:
        return Check("graphviz", ERROR, f"pygraphviz cannot be imported ({error}); DOT files cannot be loaded")
    from orchestra_adapters.render.graph_renderer import render_graph
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.model.errors import OrchestraError

    graph = parse_dot("digraph doctor { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }", path="doctor")
    with tempfile.TemporaryDirectory(prefix="orchestra-doctor-") as directory:
        try:
            render_graph(graph, Path(directory) / "doctor.svg")
        except OrchestraError as error:
            return Check(
                "graphviz", WARNING, f"pygraphviz {pygraphviz.__version__} loads DOT, but --render fails: {error}"
            )
    return Check("graphviz", OK, f"pygraphviz {pygraphviz.__version__}; the dot layout renders")


# Configuration -------------------------------------------------------------------------------------
def _config(config: Path | None, cwd: Path) -> tuple[list[Check], Any]:
    """The orchestra.yaml check (one line per problem) and, when it loaded, the container configured with it."""
    from orchestra_adapters.container import build_container
    from orchestra_cli.errors import config_problems, one_line
    from orchestra_core.model.errors import OrchestraError

    if config is not None and not (cwd / config).is_file():
        return [Check("config", ERROR, f"{config}: config file not found")], None
    container = build_container(config_path=config, cwd=cwd)
    try:
        settings = container.settings()
    except OrchestraError as error:
        problems = config_problems(error) or [one_line(str(error))]
        return [Check("config", ERROR, problem) for problem in problems], None
    if settings.source_path is None:
        detail = f"no orchestra.yaml found (defaults; project root {container.project_root()})"
        return [Check("config", OK, detail)], container
    return [Check("config", OK, f"{settings.source_path}")], container


def _providers(settings: Any) -> list[Check]:
    from orchestra_adapters.llm.providers import provider_problems, resolve_provider
    from orchestra_core.ports.chat_models import ProviderConfigError

    providers = settings.providers
    used = [providers.default or "", *(a.provider for a in settings.agents.values() if a.provider)]
    names = [name for name in dict.fromkeys([*used, *providers.entries]) if name]
    if not names:
        return [Check("providers", OK, "none configured: runs use the simulate backend")]
    checks = []
    for name in names:
        label = f"provider {name}"
        problems = provider_problems(settings, [name], os.environ)
        if problems:
            # A provider nothing selects only fails the runs that pick it explicitly.
            status = ERROR if name in used else WARNING
            checks.append(Check(label, status, "; ".join(problems)))
            continue
        try:
            provider = resolve_provider(providers, name)
        except ProviderConfigError as error:
            checks.append(Check(label, ERROR, str(error)))
            continue
        checks.append(Check(label, OK, _provider_detail(provider, name == providers.default)))
    return checks


def _provider_detail(provider: Any, is_default: bool) -> str:
    kind = provider.kind.name
    parts = [kind if kind == provider.name else f"{kind} ({provider.name})"]
    if is_default:
        parts.append("default")
    if provider.settings.cassette:
        parts.append(f"cassette {provider.settings.cassette}")
    if provider.settings.api_base:
        parts.append(f"api_base {provider.settings.api_base}")
    variable = provider.key_env()
    if variable and os.environ.get(variable):
        parts.append(f"key in ${variable}")
    return ", ".join(parts)


def _sandbox(settings: Any) -> Check:
    """The configured `sandbox.kind`, and whether bubblewrap is installed and runs a sandboxed `true` here."""
    from orchestra_adapters.process.sandbox import find_bwrap, probe

    sandbox = settings.sandbox
    wanted = sandbox.kind == "bubblewrap"
    bwrap = find_bwrap()
    if bwrap is None:
        if wanted:
            detail = "sandbox.kind is bubblewrap but bwrap is not installed: commands fail until it is"
            return Check("sandbox", ERROR, f"{detail} (apt-get install bubblewrap)")
        return Check("sandbox", OK, "none (bubblewrap is not installed)")
    problem = probe(bwrap, network=sandbox.network)
    if problem is not None:
        status = ERROR if wanted else OK
        return Check("sandbox", status, f"{sandbox.kind}; {bwrap} does not run a sandbox here: {problem}")
    if not wanted:
        return Check("sandbox", OK, f"none ({bwrap} works here; `sandbox: {{kind: bubblewrap}}` turns it on)")
    network = "network on" if sandbox.network else "network off"
    extra = f", {len(sandbox.writable)} extra writable path(s)" if sandbox.writable else ""
    return Check("sandbox", OK, f"bubblewrap ({bwrap}) works: commands and CLI agents write only their worktrees, {network}{extra}")


# Report --------------------------------------------------------------------------------------------
_STYLES = {OK: "green", WARNING: "yellow", ERROR: "bold red"}


def print_report(checks: Sequence[Check], *, json_output: bool) -> None:
    """`{"ok": bool, "checks": [{"name", "status", "detail"}]}` with --json, else a table and a summary."""
    from orchestra_cli.output import count_noun, print_json, print_table

    errors = sum(check.status == ERROR for check in checks)
    warnings = sum(check.status == WARNING for check in checks)
    if json_output:
        print_json({"ok": errors == 0, "checks": [check.to_json() for check in checks]})
        return
    print_table(
        ["status", "check", "detail"],
        [[check.status, check.name, check.detail] for check in checks],
        first_cell_styles=[_STYLES[check.status] for check in checks],
    )
    problems = ", ".join(count_noun(n, noun) for n, noun in ((errors, "error"), (warnings, "warning")) if n)
    print(f"orchestra doctor: {problems or 'all good'}")
