"""`orchestra mcp serve` run by hand (Claude Desktop, an IDE): the project's tools in this process.

It serves the repos' current checkouts (or a session's worktrees, or explicit directories): every write is
recorded in a WriteTracker and logged to stderr, and nothing is committed (it is the user's checkout).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import define, field, frozen

from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import IMPLICIT_REPO
from orchestra_core.runs.writable_roots import WritableRoots

if TYPE_CHECKING:
    from orchestra_adapters.container import Container
    from orchestra_adapters.mcp.server import LocalToolSource
    from orchestra_adapters.tools.toolbox import ExecutedCall
    from orchestra_core.agents.registry import ToolRegistry
    from orchestra_core.model.settings import OrchestraSettings

log = logging.getLogger(__name__)


class McpServeError(OrchestraError):
    """`orchestra mcp serve` was given options it cannot serve (the message says which and why)."""


@frozen(kw_only=True)
class ServeOptions:
    """What `orchestra mcp serve` serves.

    Attributes:
        project: Where the project is (its orchestra.yaml and `.orchestra/` are found from here).
        config: An orchestra.yaml to use instead of discovery.
        session: Serve this session's worktrees (as its latest checkpoint recorded them).
        node: With `pipeline`: offer exactly that node's agent's tools (else every repo's tools).
        pipeline: The pipeline file `node` is in.
        repos: Serve exactly these directories, as `(name, path)` (instead of the configured repos).
    """

    project: Path = field(factory=Path.cwd, converter=Path)
    config: Path | None = None
    session: str | None = None
    node: str | None = None
    pipeline: Path | None = None
    repos: tuple[tuple[str, Path], ...] = ()


@define
class StandaloneTools:
    """The tools `orchestra mcp serve` offers, and what they touched."""

    source: LocalToolSource
    repos: Mapping[str, RepoContext]
    tracker: WriteTracker
    container: Container
    written: list[str] = field(factory=list)

    def close(self) -> None:
        """Close what the container opened (the session store)."""
        from orchestra_adapters.container import close_container

        close_container(self.container)


def parse_repo_option(value: str) -> tuple[str, Path]:
    """`NAME=PATH` of `--repo`, the path an existing directory.

    Raises:
        McpServeError: The value is not NAME=PATH, the name is not a plain word, or the path is no directory.
    """
    name, equals, path = value.partition("=")
    name = name.strip()
    if not equals or not name or not path:
        raise McpServeError(f"--repo {value!r}: expected NAME=PATH (e.g. --repo project=.)")
    if not name.replace("-", "").replace("_", "").isalnum() or not name.isascii() or name.startswith("-"):
        raise McpServeError(f"--repo {value!r}: the name must be a plain word (letters, digits, - and _)")
    directory = Path(path).expanduser()
    if not directory.is_dir():
        raise McpServeError(f"--repo {value!r}: {directory} does not exist or is not a directory")
    return name, directory.resolve()


def standalone_tools(options: ServeOptions) -> StandaloneTools:
    """Build the tools to serve: the configured repos' checkouts (the project root as `project` without
    any), a session's worktrees, or the `--repo` directories; every tool, or the node's agent's.

    Raises:
        OrchestraError: Bad options, configuration, session, pipeline or node (the message says which).
    """
    _check(options)
    from orchestra_adapters.container import build_container

    container = build_container(config_path=options.config, pipeline_path=options.pipeline, cwd=options.project)
    try:
        return _build(options, container)
    except BaseException:
        from orchestra_adapters.container import close_container

        close_container(container)
        raise


def _check(options: ServeOptions) -> None:
    if (options.node is None) != (options.pipeline is None):
        raise McpServeError("--node and --pipeline go together: the node's agent decides the tools")
    if options.session is not None and options.repos:
        raise McpServeError("give --session or --repo, not both: each says which worktrees to serve")
    if not options.project.is_dir():
        raise McpServeError(f"--project {options.project}: not a directory")
    names = [name for name, _ in options.repos]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise McpServeError(f"--repo {duplicates[0]} is given twice")


def _build(options: ServeOptions, container: Container) -> StandaloneTools:
    from orchestra_adapters.mcp.server import LocalToolSource
    from orchestra_adapters.tools.toolbox import Toolbox
    from orchestra_core.agents.toolset import build_tools, create_registry

    settings = container.settings()
    if options.repos:
        repos = {name: RepoContext(name, path, repo_root=path) for name, path in options.repos}
    elif options.session is not None:
        repos = _session_repos(container, options.session)
    else:
        repos = _checkout_repos(container)
    roots = [str(context.root) for context in repos.values()]
    registry = create_registry(settings, WritableRoots(container.command_runner(), lambda: roots))
    names = _tool_names(options, container, registry, list(repos))
    tracker = WriteTracker()
    toolbox = Toolbox(build_tools(registry, names, repos, tracker))
    written: list[str] = []
    source = LocalToolSource(
        toolbox, report_outcome=options.node is not None, on_call=_log_writes(tracker, written)
    )
    return StandaloneTools(source, repos, tracker, container, written)


def _checkout_repos(container: Container) -> dict[str, RepoContext]:
    """The configured repos' checkouts as they are (checked to be git repositories), or the project root."""
    from orchestra_core.model.layout import ProjectLayout
    from orchestra_core.workspace.setup import RepoChecker

    settings = container.settings()
    project_root = container.project_root()
    if not settings.workspace.repos:
        return {IMPLICIT_REPO: RepoContext(IMPLICIT_REPO, project_root)}
    checker = RepoChecker(container.git(), settings.base_dir, ProjectLayout(project_root).state_dir)
    repos = {}
    for name, repo in settings.workspace.repos.items():
        root = checker.repo_root(f"workspace.repos.{name}", repo)
        repos[name] = RepoContext(name, root, repo_root=root)
    return repos


def _session_repos(container: Container, session_id: str) -> dict[str, RepoContext]:
    """The worktrees of a recorded session, as its latest checkpoint left them (they must still exist)."""
    from orchestra_adapters.storage.factory import store_location
    from orchestra_core.model.store_errors import SessionNotFoundError
    from orchestra_core.session.api import latest_checkpoint
    from orchestra_core.session.checkpoints import repo_heads
    from orchestra_core.workspace.manager import WorkspaceManager

    settings = container.settings()
    project_root = container.project_root()
    location, exists = store_location(settings.storage, project_root)
    if not exists:  # opening a SQLite store would create it
        raise SessionNotFoundError(f"no session {session_id!r}: there is no session store at {location} yet")
    store = container.session_store()
    info = store.get_session(session_id)
    found = latest_checkpoint(store, info.session_id)
    heads = repo_heads(found.checkpoint) if found is not None else {}
    if not heads:
        if settings.workspace.repos:
            raise McpServeError(f"session {info.session_id} has no recorded worktrees yet")
        return {IMPLICIT_REPO: RepoContext(IMPLICIT_REPO, project_root)}
    manager = WorkspaceManager(
        settings.workspace, container.git(), container.clock(), project_root, config_dir=settings.base_dir
    )
    recorded = {name: (head.branch, head.sha, head.base_sha) for name, head in heads.items()}
    repos = {}
    for context in manager.recorded_contexts(info.session_id, "", recorded):
        if not context.worktree_path.is_dir():
            raise McpServeError(
                f"session {info.session_id}: the worktree of repo {context.repo_name} ({context.worktree_path}) "
                f"is gone; `orchestra resume {info.session_id}` recreates it"
            )
        # An IDE or another agent reads the files from disk too: a lazy worktree (a run of own-tools agents
        # leaves one) becomes a full checkout before it is served.
        container.git().materialize(context.worktree_path)
        repos[context.repo_name] = context.repo_context()
    return repos


def _tool_names(
    options: ServeOptions, container: Container, registry: ToolRegistry, repos: Sequence[str]
) -> list[str]:
    """Every tool of the served repos, or (with --node) the node's agent's tools among them."""
    available = registry.names(repos)
    if options.node is None or options.pipeline is None:
        return list(available)
    from orchestra_core.agents.resolver import AgentResolver
    from orchestra_core.pipeline import prepare_pipeline

    graph = prepare_pipeline(options.pipeline).graph
    node = graph.nodes.get(options.node)
    if node is None:
        import difflib

        close = difflib.get_close_matches(options.node, list(graph.nodes), n=1)
        hint = f"did you mean {close[0]}?" if close else f"nodes: {', '.join(graph.nodes) or 'none'}"
        raise McpServeError(f"{options.pipeline}: no node {options.node!r} ({hint})")
    settings: OrchestraSettings = container.settings()
    resolver = AgentResolver(settings, container.prompt_library(), registry)
    return [name for name in resolver.tool_names_for(node) if name in available]


def _log_writes(tracker: WriteTracker, written: list[str]) -> Callable[[ExecutedCall], None]:
    def log_writes(executed: ExecutedCall) -> None:
        files = tracker.flush()
        if files:
            written.extend(files)
            log.info("%s wrote %s (not committed)", executed.record.name, ", ".join(files))

    return log_writes
