"""Assembles one run from the container: session recorder, workspace, agents, backend and engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestra_cli.runtime.options import RunOptions
from orchestra_cli.runtime.session_lock import SessionLock
from orchestra_cli.runtime.session_start import REPLAY, RESUME, SessionStart

if TYPE_CHECKING:
    from orchestra_core.agents.repo_context import RepoContext
    from orchestra_core.engine.stage import StageRun
    from orchestra_core.model.checkpoint import RunResult
    from orchestra_core.model.graph import Graph, Node
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.session.checkpoints import RepoHead
    from orchestra_core.session.recorder import SessionRecorder
    from orchestra_core.workspace.session import WorkspaceSession

SIMULATE = "simulate"
IMPLICIT_REPO = "project"


class RunAssembly:
    """Builds everything one run needs; `run()` executes it and `close()` releases what it opened."""

    def __init__(self, options: RunOptions, container: Any, graph: Graph, start: SessionStart) -> None:
        self.options = options
        self.container = container
        self.graph = graph
        self.start = start
        self.settings = container.settings()
        self.project_root: Path = container.project_root()
        self.clock = container.clock()
        self.lock = SessionLock(self.project_root, start.session_id)
        self.lock.acquire()  # before anything is recorded: a resume of a session running elsewhere stops here
        self.store = container.session_store()
        self.backend_name = backend_name(options, self.settings, graph)
        self.progress: list[Any] = []
        self.workspace: WorkspaceSession | None = None
        self.recorder = self._recorder()
        self.backend: Any = None

    @property
    def session_id(self) -> str:
        return self.start.session_id

    @property
    def uses_llm(self) -> bool:
        return self.backend_name != SIMULATE

    def logs_root(self) -> str:
        return logs_root_for(self.options, self.project_root, self.session_id)

    # Workspace -------------------------------------------------------------------------------------
    def open_workspace(self) -> WorkspaceSession | None:
        """Set up (new, replay) or reopen (resume) the session branches; None without workspace repos.

        Raises:
            OrchestraError: A repo is unusable, the `cheap` alias is missing, or git failed.
        """
        self._exclude_state_dir()
        if not self.settings.workspace.repos:
            return None
        manager = self._workspace_manager(self.start.repo_heads if self.start.kind == REPLAY else {})
        if self.start.kind == RESUME and self.start.repo_heads:
            heads = {name: (h.branch, h.sha, h.base_sha) for name, h in self.start.repo_heads.items()}
            contexts = manager.recorded_contexts(self.session_id, self.pipeline_name, heads)
            self.workspace = manager.reopen_session(contexts)
            for name, head in self.start.repo_heads.items():
                self.workspace.restore(name, head.sha, reason="resume")
        else:
            check = self._check_cheap_model if self.uses_llm else None
            self.workspace = manager.setup_session(self.session_id, self.pipeline_name, check_cheap_model=check)
        return self.workspace

    def _exclude_state_dir(self) -> None:
        """The store already made `.orchestra/`: keep it out of the project repo's `git status` even when
        there are no workspace repos or their setup fails."""
        from orchestra_core.workspace.manager import WorkspaceManager

        WorkspaceManager(self.settings.workspace, self.container.git(), self.clock, self.project_root).exclude_state_dir()

    def _workspace_manager(self, bases: Mapping[str, RepoHead]) -> Any:
        from attrs import evolve

        from orchestra_core.workspace.manager import WorkspaceManager

        workspace = self.settings.workspace
        if bases:  # a replay starts its new branches where the recorded ones were at the fork
            repos = {
                name: evolve(repo, base_ref=bases[name].sha) if name in bases else repo
                for name, repo in workspace.repos.items()
            }
            workspace = evolve(workspace, repos=repos)
        return WorkspaceManager(
            workspace,
            self.container.git(),
            self.clock,
            self.project_root,
            config_dir=self.settings.base_dir,
            commit_messages=self._commit_messages() if self.uses_llm else None,
            on_event=self._on_workspace_event,
        )

    def _commit_messages(self) -> Any:
        from orchestra_adapters.llm.commit_messages import ChatModelCommitMessages

        return ChatModelCommitMessages(self.container.chat_models().create("", "", purpose="commit_message"))

    def _check_cheap_model(self) -> None:
        models = self.container.agent_resolver().models
        provider = models.default_provider()
        entry = self.settings.providers.entries.get(provider)
        if entry is None or entry.cassette is None:  # a scripted cassette answers any model name
            models.require_alias("cheap", provider)

    def _on_workspace_event(self, event: Any) -> None:
        self.recorder.on_workspace_event(event)
        from orchestra_core.model.workspace_events import SessionBranchCreated

        if isinstance(event, SessionBranchCreated):
            where = "in place" if event.isolation == "in_place" else f"worktree {event.worktree_path}"
            self.note(f"branch {event.branch} in {event.repo} ({where})")
        elif getattr(event, "level", "info") == "warning":
            self.note(f"warning: {_event_text(event)}")

    # Agents and backend ----------------------------------------------------------------------------
    def make_backend(self) -> Any:
        if not self.uses_llm:
            return None
        from orchestra_adapters.backends.registry import create_backend

        self.backend = create_backend(
            self.backend_name,
            chat_models=self.container.chat_models(),
            resolver=self.container.agent_resolver(),
            toolset=_Toolset(self.container.agent_resolver(), self.repo_contexts),
            state_path=self.project_root / ".orchestra" / "agents.db",
            tool_hooks=self._tool_hooks,
        )
        return self.backend

    def repo_contexts(self) -> dict[str, RepoContext]:
        """The repos agents' tools work in: the session worktrees, or the project root as `project`."""
        if self.workspace is not None:
            return self.workspace.repo_contexts()
        from orchestra_core.agents.repo_context import RepoContext

        return {IMPLICIT_REPO: RepoContext(IMPLICIT_REPO, self.project_root)}

    def tool_workdir(self) -> Path:
        """Where tool nodes run: the session worktree when there is exactly one repo, else the project."""
        contexts = self.repo_contexts()
        if self.workspace is not None and len(contexts) == 1:
            return next(iter(contexts.values())).root
        return self.project_root

    def _tool_hooks(self, node: Node, context: Any) -> Any:
        from orchestra_core.agents.hooks import ToolHooks

        def log(result: Any) -> None:
            context.append_log(f"tool hook {result}")

        runner = self.container.command_runner()
        return ToolHooks.for_node(node, self.graph, runner, cwd=str(self.tool_workdir()), on_result=log)

    def on_turn_factory(self, node: Node, stage: StageRun) -> Callable[[AgentTurn], None]:
        """Each agent turn: committed by the workspace (when there is one), then recorded and shown."""

        def record(turn: AgentTurn) -> None:
            self.recorder.record_agent_turn(turn, stage.branch)
            self.note(describe_turn(turn))

        return self.workspace.on_turn_wrapper(record) if self.workspace is not None else record

    # Engine ----------------------------------------------------------------------------------------
    def engine(self, interviewer: Any, observers: list[Any]) -> Any:
        from orchestra_core.agents.prompt_builder import AgentPromptBuilder
        from orchestra_core.engine.runner import PipelineEngine
        from orchestra_core.handlers import build_registry

        registry = build_registry(
            backend=self.make_backend(),
            interviewer=interviewer,
            command_runner=self.container.command_runner(),
            workdir=str(self.tool_workdir()),
            prompt_builder=AgentPromptBuilder(self.container.agent_resolver()),
            on_turn_factory=self.on_turn_factory,
            pipeline_loader=self._load_child,
        )
        return PipelineEngine(
            registry,
            run_directory=self.container.run_directories(),
            clock=self.clock,
            observers=[self.recorder, *observers],
            checkpoint_sinks=[self.recorder],
            max_node_visits=self.options.max_visits,
            workspace_snapshot=self.workspace.snapshot if self.workspace is not None else None,
        )

    def run(self, engine: Any, initial_context: Mapping[str, Any]) -> RunResult:
        if self.start.checkpoint is not None:
            self._ensure_manifest(initial_context)
        return engine.run(
            self.graph,
            session_id=self.session_id,
            logs_root=self.logs_root(),
            initial_context=initial_context if self.start.checkpoint is None else None,
            resume_from=_steered(self.start.checkpoint, {**initial_context, "internal.session_id": self.session_id}),
        )

    def _ensure_manifest(self, initial_context: Mapping[str, Any]) -> None:
        """A replay, or a resume where the run directory is missing, starts its run directory with a manifest,
        so the directory stays a complete mirror (and `resume --logs-root` works on it)."""
        from orchestra_core.engine.run_state import manifest_for

        directory = self.container.run_directories().open(self.logs_root())
        if directory.read_manifest() is None:
            now = self.clock.now()
            directory.write_manifest(manifest_for(self.graph, self.session_id, directory.root, now, initial_context))

    def record_failure(self, reason: str, *, interrupted: bool = False) -> None:
        """Mark the session failed (or interrupted) when the run could not start or was stopped."""
        from orchestra_core.model import records
        from orchestra_core.model.outcome import StageStatus
        from orchestra_core.session.api import append_record

        kind = records.LifecycleEvent.INTERRUPTED if interrupted else records.LifecycleEvent.FAILED
        status = None if interrupted else StageStatus.FAIL
        record = records.PipelineLifecycle(kind, self.pipeline_name, status=status, error=reason)
        append_record(self.store, self.session_id, record)

    def repos_json(self) -> dict[str, dict[str, str]]:
        """`repos` of the run JSON: each repo's session branch, base and head."""
        if self.workspace is None:
            return {}
        heads = self.workspace.snapshot()
        return {
            name: {"branch": context.branch_name, "base_sha": context.base_sha, "head_sha": heads.get(name, "")}
            for name, context in self.workspace.contexts.items()
        }

    def note(self, line: str) -> None:
        for observer in self.progress:
            observer.note(line)

    def close(self) -> None:
        close = getattr(self.backend, "close", None)
        if close is not None:
            close()
        self.store.close()
        self.lock.release()

    @property
    def pipeline_name(self) -> str:
        return self.graph.name or Path(self.start.source.path or "pipeline").stem

    def _recorder(self) -> SessionRecorder:
        from orchestra_core.session.recorder import SessionRecorder

        return SessionRecorder(
            self.store, self.session_id, pipeline_name=self.pipeline_name, source=self.start.source,
            repo_heads=self._repo_heads,
        )

    def _repo_heads(self) -> dict[str, RepoHead]:
        from orchestra_core.session.checkpoints import RepoHead

        if self.workspace is None:
            return {}
        heads = self.workspace.snapshot()
        return {
            name: RepoHead(context.branch_name, heads.get(name, context.head_sha), context.base_sha)
            for name, context in self.workspace.contexts.items()
        }

    def _load_child(self, path: str) -> Graph:
        from orchestra_core.model.errors import OrchestraError
        from orchestra_core.pipeline import prepare_pipeline
        from orchestra_core.validation import ValidationError

        prepared = prepare_pipeline(path)
        if prepared.errors:
            raise OrchestraError(f"child pipeline {path}: {ValidationError(list(prepared.diagnostics))}")
        return prepared.graph


class _Toolset:
    """The LLM backend's view of tools: the node's agent tools bound to the run's repos."""

    def __init__(self, resolver: Any, repos: Callable[[], Mapping[str, RepoContext]]) -> None:
        self._resolver = resolver
        self._repos = repos

    def tools_for(self, node: Node, agent: Any, context: Any, tracker: Any) -> list[Any]:
        return self._resolver.tools(agent, self._repos(), tracker)


def backend_name(options: RunOptions, settings: Any, graph: Graph) -> str:
    """`--backend`, else orchestra.yaml's (per pipeline, then global), else `langgraph` when providers
    are configured, else `simulate`."""
    if options.backend:
        return options.backend
    configured = settings.backend_for(graph.name)
    if configured:
        return str(configured)
    return "langgraph" if settings.providers.entries else SIMULATE


def logs_root_for(options: RunOptions, project_root: Path, session_id: str) -> str:
    """The run directory: `--logs-root`, else `.orchestra/runs/<session-id>` under the project root."""
    return str(options.logs_root or project_root / ".orchestra" / "runs" / session_id)


def describe_turn(turn: AgentTurn) -> str:
    """A one-line summary of an agent turn for progress output."""
    tools = ", ".join(call.name for call in turn.tool_calls) or "no tools"
    line = f"  . {turn.node_id} turn {turn.turn_number}: {tools}"
    for commit in turn.commits:
        summary = commit.message.splitlines()[0] if commit.message else ""
        line += f"; {commit.repo} {commit.sha[:8]} {summary}"
    return line


def _event_text(event: Any) -> str:
    reason = getattr(event, "reason", "")
    return f"{type(event).__name__} in {getattr(event, 'repo', '?')}" + (f": {reason}" if reason else "")


def _steered(checkpoint: Any, overrides: Mapping[str, Any]) -> Any:
    """On resume, `--set` values (and the session id, new for a replay) override the restored context."""
    if checkpoint is None:
        return checkpoint
    from attrs import evolve

    return evolve(checkpoint, context={**checkpoint.context, **overrides})

