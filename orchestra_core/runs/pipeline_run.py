"""One run of a pipeline as a session: lock, recorder, workspace, agents, backend and engine, then the run."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import evolve

from orchestra_core.agents.prompt_builder import AgentPromptBuilder
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.resolver import AgentResolver
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.engine.emitter import Emitter
from orchestra_core.engine.run_state import manifest_for
from orchestra_core.engine.runner import PipelineEngine
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers import build_registry
from orchestra_core.model import records
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.chat import ChatHistory
from orchestra_core.model.checkpoint import RunResult, RunStatus
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.events import AgentTurnCompleted
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.layout import ProjectLayout
from orchestra_core.model.money import CostTally
from orchestra_core.model.outcome import StageStatus
from orchestra_core.model.settings import IMPLICIT_REPO
from orchestra_core.model.turn import AgentTurn
from orchestra_core.pipeline import prepare_pipeline
from orchestra_core.ports.codergen_backend import CodergenBackend, OnTurn
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.ports.session_locks import CheckoutLocks, SessionLease
from orchestra_core.runs.events import EventFanout
from orchestra_core.runs.extensions import Extensions
from orchestra_core.runs.ports import RunOptions, RunPorts
from orchestra_core.runs.run_remotes import RunRemotes
from orchestra_core.runs.run_services import NoPromptLayers, NoRecorder, RunAgentRuntime
from orchestra_core.runs.spending import MeteredCommitMessages, run_budgets, start_meter
from orchestra_core.runs.start import NEW, REPLAY, RESUME, SessionStart, begin
from orchestra_core.runs.tool_turns import RunToolTurns
from orchestra_core.runs.watchers import RunWatchers, WatchedRun
from orchestra_core.runs.writable_roots import WritableRoots
from orchestra_core.session.api import append_record, publish_types
from orchestra_core.session.checkpoints import RepoHead
from orchestra_core.session.conversation import chat_history
from orchestra_core.session.recorder import SessionRecorder
from orchestra_core.session.spending import session_spending
from orchestra_core.validation import ValidationError

if TYPE_CHECKING:  # a run without workspace repos (and without LLM agents) needs none of these
    from orchestra_core.model.workspace_events import WorkspaceEvent
    from orchestra_core.runs.branch_workspaces import RunBranchWorkspaces
    from orchestra_core.runs.fleet_branches import FleetBranches
    from orchestra_core.workspace.branches import BranchWorktrees
    from orchestra_core.workspace.manager import WorkspaceManager
    from orchestra_core.workspace.session import WorkspaceSession


class PipelineRun:
    """Builds everything one run needs; `execute()` runs it, `close()` releases what it opened.

    Creating a PipelineRun checks the workspace repos, then begins its session (a new run's is created, a
    planned replay forks here) and takes the session's lock, before anything is recorded: bad input stops
    it before a session exists. `open()` then sets up the workspace and the engine; a failure there is
    recorded on the session. Use it as a context manager, or call `close()`.
    """

    def __init__(
        self,
        graph: Graph,
        start: SessionStart,
        ports: RunPorts,
        options: RunOptions,
        extensions: Extensions | None = None,
    ) -> None:
        self.graph = graph
        self.ports = ports
        self.options = options
        self.extensions = extensions or Extensions()
        self.layout = ProjectLayout(options.project_root.resolve())
        self.events = EventFanout(options.on_event)
        self._resolver: AgentResolver | None = None
        self.commit_messages = ports.commit_messages
        # a budget attribute that does not parse stops the run before a session exists
        self.budget, self.node_budgets = run_budgets(options.settings, graph, options.budget)
        self.remotes = RunRemotes(options.settings, ports.git, ports.git_remotes)
        self.remotes.prepare(start)  # clone/fetch: an unreachable remote stops the run before anything is recorded
        creates_session = start.creates_session or (ports.store is None and not start.session_id)
        if ports.store is not None:
            if start.creates_session:  # bad input stops the run here, before a session exists
                self._check_workspace(start)
            publish_types(ports.store)
            start = begin(ports.store, start)
        elif not start.session_id:
            start = evolve(start, session_id=uuid.uuid4().hex[:12])
        self.start = start
        self._lease: SessionLease | None = None
        self._checkout_leases: list[SessionLease] = []
        if ports.session_locks is not None:  # before anything is recorded: a session running elsewhere stops here
            self._lease = ports.session_locks.acquire(start.session_id)
        self.spending = start_meter(
            ports.store, self.budget_session(), options.settings, self.budget, self.node_budgets, ports.clock
        )
        if ports.fleet is not None and ports.store is not None and self.budget.limited:  # branches run elsewhere
            store, session = ports.store, self.budget_session()
            self.spending.read_store_between_nodes(lambda: session_spending(store, session))
        if self.commit_messages is not None:
            self.commit_messages = MeteredCommitMessages(self.commit_messages, self.spending)
        self.recorder = self._recorder()
        self.watchers = self._watchers(created=creates_session)
        self._record_start()
        self.workspace: WorkspaceSession | None = None
        self.branches: BranchWorktrees | None = None  # parallel branches' worktrees (with workspace repos)
        self._rolled_back: dict[str, RepoHead] = {}  # rollback on failure: where each branch was
        self._writers: dict[str, bool] = {}
        self.backend: CodergenBackend | None = None
        self.engine: PipelineEngine | None = None

    def __enter__(self) -> PipelineRun:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def session_id(self) -> str:
        return self.start.session_id

    @property
    def pipeline_name(self) -> str:
        """The graph's name, else the pipeline file's stem."""
        return self.graph.name or Path(self.start.source.path or "pipeline").stem

    @property
    def logs_root(self) -> str:
        """The run directory: the one asked for, else `.orchestra/runs/<session-id>` under the project root."""
        return self.options.logs_root or str(self.layout.run_dir(self.session_id))

    @property
    def resolver(self) -> AgentResolver:
        """Resolves nodes' agents against the settings, the prompt library and the tools."""
        if self._resolver is None:
            settings = self.options.settings
            tools = self.extensions.tool_registry(settings, self.ports.command_runner)
            self._resolver = AgentResolver(settings, self.ports.prompt_library or NoPromptLayers(), tools)
        return self._resolver

    @property
    def initial_context(self) -> dict[str, Any]:
        """The values the run starts with: those its session was started with (a run started again from the
        beginning), overridden by the ones given now."""
        return {**self.start.initial_context, **self.options.initial_context}

    def budget_session(self) -> str:
        """The session whose spending the budgets bound (a branch run's is the session of its run)."""
        return self.session_id

    def session_cost(self) -> CostTally:
        """What the session has cost so far, its earlier runs, branches and replayed history included (without a
        store: this run)."""
        if self.ports.store is None:
            return self.spending.spending().cost
        return session_spending(self.ports.store, self.budget_session()).cost

    # Setting up ------------------------------------------------------------------------------------
    def _record_start(self) -> None:
        """A run from the start node records its start as soon as it holds the session, with what it needs to
        begin again (pipeline source, `--set` values): killed before its first checkpoint, it is `interrupted`,
        not `new`, and `resume` starts it again from the beginning. The engine's own start is then not recorded
        twice."""
        start = self.start
        if start.checkpoint is not None or not (start.kind == NEW or start.from_start):
            return
        event = records.LifecycleEvent.STARTED if start.kind == NEW else records.LifecycleEvent.RESUMED
        self.recorder.record_start(
            records.PipelineLifecycle(
                event, self.pipeline_name, goal=self.graph.goal, dot_path=start.source.path,
                dot_blob=start.source.blob, logs_root=self.logs_root, initial_context=self.initial_context,
            )
        )  # fmt: skip

    def _check_workspace(self, start: SessionStart) -> None:
        """Before a new session (or a replay's fork) exists: the workspace repos are usable and, with repos to
        commit to, the `cheap` model resolves; what `open_workspace` then sets up cannot fail on bad input.

        Raises:
            WorkspaceConfigError: A repo is unusable (every problem listed).
            OrchestraError: The `cheap` model alias does not resolve.
        """
        settings = self.options.settings
        if not settings.workspace.repos or self.ports.git is None:
            return
        manager = self._workspace_manager(start.repo_heads if start.kind == REPLAY else {})
        manager.exclude_state_dir()  # the store may have made `.orchestra/`: keep it out of `git status`
        name = self.graph.name or Path(start.source.path or "pipeline").stem
        check = self._check_cheap_model if self.ports.commit_messages is not None else None
        manager.check_repos(name, check_cheap_model=check)

    def open(self) -> PipelineRun:
        """Set up the workspace and the engine; a failure is recorded on the session, then raised.

        Raises:
            OrchestraError: A repo is unusable, git failed, or the backend cannot be built.
        """
        try:
            self.open_workspace()
            self.backend = self._make_backend()
            self._full_checkout_unless_lazy()
            self.engine = self._make_engine()
        except KeyboardInterrupt:  # stopped while setting up: resumable, as a run stopped later is
            self.record_failure("interrupted", interrupted=True)
            self.watchers.notify_end("interrupted")
            raise
        except BaseException as error:
            self.record_failure(str(error) or type(error).__name__)
            self.watchers.notify_end("fail", str(error) or type(error).__name__)
            if isinstance(error, Exception):
                self._roll_back_after(error)
            raise
        return self

    def open_workspace(self) -> WorkspaceSession | None:
        """Set up (new, replay) or reopen (resume) the session branches; None without workspace repos."""
        git = self.ports.git
        settings = self.options.settings
        if git is not None:
            # The store may already have made `.orchestra/`: keep it out of the project repo's `git status`.
            from orchestra_core.workspace.state_dir import exclude_state_dir

            exclude_state_dir(git, self.layout.root)
        if not settings.workspace.repos:
            return None
        if git is None:
            raise OrchestraError("workspace.repos needs the git port; none was given")
        manager = self._workspace_manager(self.start.repo_heads if self.start.kind == REPLAY else {})
        self._lock_checkouts(manager.in_place_checkouts())
        from_start = self.start.from_start
        if self.start.kind == RESUME and self.start.repo_heads:
            heads = {name: (h.branch, h.sha, h.base_sha) for name, h in self.start.repo_heads.items()}
            contexts = manager.recorded_contexts(self.session_id, self.pipeline_name, heads)
            self.workspace = manager.reopen_from_start(contexts) if from_start else manager.reopen_session(contexts)
            for name, head in self.start.repo_heads.items():
                self.workspace.restore(name, head.sha, reason="resume")
            if not from_start:  # from the start, the first checkpoint records every head
                self.recorder.continue_from(self.start.repo_heads)
        else:
            check = self._check_cheap_model if self.ports.commit_messages is not None else None
            setup = manager.setup_from_start if from_start else manager.setup_session
            lazy = self._session_may_be_lazy()
            self.workspace = setup(self.session_id, self.pipeline_name, check_cheap_model=check, lazy=lazy)
        from orchestra_core.workspace.branches import BranchWorktrees

        self.branches = BranchWorktrees(
            self.workspace, git, self.ports.clock, manager.worktrees_dir(self.session_id), self.pipeline_name,
            self._on_workspace_event,
        )
        self.remotes.attach(self.workspace, self.session_id, self._on_workspace_event, self.events.subscribe)
        return self.workspace

    def _lock_checkouts(self, checkouts: list[Path]) -> None:
        """Hold the lock of every checkout the run works in place in: a run going on there refuses this one.

        Raises:
            CheckoutBusyError: Another run works in place in one of them (the message names its session).
        """
        locks = self.ports.session_locks
        if isinstance(locks, CheckoutLocks):
            for checkout in checkouts:
                self._checkout_leases.append(locks.acquire_checkout(str(checkout), self.session_id))

    def _workspace_manager(self, bases: Mapping[str, RepoHead]) -> WorkspaceManager:
        from orchestra_core.workspace.manager import WorkspaceManager

        settings = self.options.settings
        workspace = settings.workspace
        if bases:  # a replay starts its new branches where the recorded ones were at the fork
            repos = {
                name: evolve(repo, base_ref=bases[name].sha) if name in bases else repo
                for name, repo in workspace.repos.items()
            }
            workspace = evolve(workspace, repos=repos)
        assert self.ports.git is not None
        return WorkspaceManager(
            workspace,
            self.ports.git,
            self.ports.clock,
            self.layout.root,
            config_dir=settings.base_dir,
            commit_messages=self.commit_messages,
            on_event=self._on_workspace_event,
        )

    def _check_cheap_model(self) -> None:
        models = self.resolver.models
        provider = models.default_provider()
        entry = self.options.settings.providers.entries.get(provider)
        if entry is None or entry.cassette is None:  # a scripted cassette answers any model name
            models.require_alias("cheap", provider)

    def _on_workspace_event(self, event: WorkspaceEvent) -> None:
        self.recorder.on_workspace_event(event)
        self.events.deliver(event)

    def _make_backend(self) -> CodergenBackend | None:
        backend = self.ports.backend
        if backend is None or isinstance(backend, CodergenBackend):
            return backend
        return backend(RunAgentRuntime(self))

    def _make_engine(self) -> PipelineEngine:
        registry = build_registry(
            backend=self.backend,
            interviewer=self.ports.interviewer,
            command_runner=self.command_runner(),
            workdir=lambda branch: str(self.command_workdir(branch)),
            prompt_builder=AgentPromptBuilder(self.resolver),
            on_turn_factory=self.on_turn_factory,
            pipeline_loader=self._load_child,
            mode_for=self.resolver.mode_for,
            chat_history=self._chat_history,
            tool_turns=RunToolTurns(
                self.workspace_for, self.protected_paths, self._record_turn, clock=self._turn_clock()
            ),
        )
        self.extensions.install_handlers(registry)
        remote = self._remote_branches()
        observers = [self.recorder, *self.options.observers, self.events]
        self.spending.attach(Emitter(self.session_id, self.ports.clock, observers).emit)
        return PipelineEngine(
            registry,
            run_directory=self.ports.run_directories,
            clock=self.ports.clock,
            observers=observers,
            checkpoint_sinks=[self.recorder],
            max_node_visits=self.options.max_node_visits,
            workspace_snapshot=self.workspace.snapshot if self.workspace is not None else None,
            branch_workspaces=self._branch_workspaces(remote),
            remote_branches=remote,
            budget=self.spending,
        )

    def _chat_history(self, session_id: str, node_id: str) -> ChatHistory:
        """The conversation an interrupted run left in an interactive node (none without a store)."""
        return chat_history(self.ports.store, session_id, node_id) if self.ports.store is not None else ChatHistory()

    def _branch_workspaces(self, remote: FleetBranches | None = None) -> RunBranchWorkspaces | None:
        if self.branches is None:
            return None
        from orchestra_core.runs.branch_workspaces import RunBranchWorkspaces

        fork_all = remote.forks_every_branch if remote else None
        return RunBranchWorkspaces(self.branches, self.may_write, fork_all, reads_lazily=self.reads_lazily)

    def _remote_branches(self) -> FleetBranches | None:
        """With a fleet, the branches of main-line fan-outs go to its workers (they record into the store)."""
        fleet, store = self.ports.fleet, self.ports.store
        if fleet is None or store is None or not isinstance(self.recorder, SessionRecorder):
            return None
        from orchestra_core.interview import AutoApproveInterviewer
        from orchestra_core.runs.fleet_branches import FleetBranches

        return FleetBranches(
            fleet=fleet, session_id=self.session_id, graph=self.graph, source=self.start.source, store=store,
            recorder=self.recorder, locks=self.ports.session_locks, worktrees=self.branches,
            repos=self.options.settings.workspace.repos, remotes=self.ports.git_remotes,
            auto_approve=isinstance(self.ports.interviewer, AutoApproveInterviewer),
        )  # fmt: skip

    # Agents ----------------------------------------------------------------------------------------
    def workspace_for(self, branch: str | None) -> WorkspaceSession | None:
        """The workspace a node of parallel branch `branch` (None: the main line) works in: its branch's
        worktrees when it has them, else the enclosing branch's, else the session's."""
        if self.branches is not None:
            return self.branches.session_for(branch)
        return self.workspace

    def repo_contexts(self, branch: str | None = None) -> dict[str, RepoContext]:
        """The repos agents' tools work in: the session (or `branch`'s) worktrees, or the project root as
        `project`."""
        workspace = self.workspace_for(branch)
        contexts = workspace.repo_contexts() if workspace is not None else {
            IMPLICIT_REPO: RepoContext(IMPLICIT_REPO, self.layout.root)
        }
        protected = self.protected_paths()
        return {name: evolve(context, protected=protected) for name, context in contexts.items()}

    def protected_paths(self) -> tuple[Path, ...]:
        """Orchestra's own state, which no tool may write even where it lies inside a repo (a project inside
        its repository, a `--logs-root` there): the state directory, the run directory, and a SQLite store
        that `storage.path` puts elsewhere (with its journal files)."""
        paths = [self.layout.state_dir, Path(self.logs_root)]
        storage = self.options.settings.storage
        if storage.backend == "sqlite" and storage.path:
            store = Path(storage.path).expanduser()
            store = store if store.is_absolute() else self.layout.root / store
            paths += [store, *(store.with_name(store.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]
        return tuple(paths)

    def may_write(self, node_id: str) -> bool:
        """Whether a node may change repo files (a tool node, or an agent with a writing tool): a parallel
        branch running one gets its own worktrees."""
        if node_id not in self._writers:
            self._writers[node_id] = self._node_writes(self.graph.nodes.get(node_id))
        return self._writers[node_id]

    def _node_writes(self, node: Node | None) -> bool:
        if node is None or node.handler_type not in ("tool", "codergen"):
            return False
        if node.handler_type == "tool":
            return True
        from orchestra_core.agents.toolset import build_tools

        try:
            tools = build_tools(
                self.resolver.registry, self.resolver.tool_names_for(node), self.repo_contexts(), WriteTracker()
            )
        except Exception:  # the node fails on its own when it runs; isolate it meanwhile
            return True
        return any(tool.writes_files for tool in tools)

    def reads_lazily(self, node_id: str) -> bool:
        """Whether a node reads repo files only through Orchestra's own file tools (a parallel branch of such
        nodes gets lazy worktrees): not a tool node, nor an agent with a shell (a CLI agent backend) or with
        a tool other than the built-in file tools."""
        node = self.graph.nodes.get(node_id)
        if node is None or node.handler_type == "tool":
            return False
        if node.handler_type != "codergen":
            return True
        if any(self.graph.tool_hooks_for(node)) or self._gives_a_shell(node):
            return False
        from orchestra_core.agents.builtin_tools import only_own_tools
        from orchestra_core.agents.toolset import build_tools

        try:
            tools = build_tools(
                self.resolver.registry, self.resolver.tool_names_for(node), self.repo_contexts(), WriteTracker()
            )
        except Exception:  # the node fails on its own when it runs; give it every file meanwhile
            return False
        return only_own_tools(tools)

    def _session_may_be_lazy(self) -> bool:
        """Whether the session's worktrees may start lazy, from the graph alone (the backend is not built yet):
        no tool node, no tool hooks and no manager loop (whose child pipeline's nodes are not in this graph).
        `_full_checkout_unless_lazy` finishes the decision once the backend is there."""
        for node in self.graph.nodes.values():
            if node.handler_type in ("tool", "stack.manager_loop") or any(self.graph.tool_hooks_for(node)):
                return False
        return True

    def _full_checkout_unless_lazy(self) -> None:
        """Make the session's lazy worktrees full checkouts, before any node runs, unless every node of the graph
        reads files only through Orchestra's own tools (`reads_lazily`: no CLI agent with a shell, no other tool);
        a node that turns out to need every file later (a command, a CLI agent) gets them first all the same."""
        workspace = self.workspace
        if workspace is None or not workspace.lazy_repos():
            return
        if not all(self.reads_lazily(node_id) for node_id in self.graph.nodes):
            self.full_checkout(None)

    def _gives_a_shell(self, node: Node) -> bool:
        """Whether the node's backend runs an agent with a shell (`gives_agents_a_shell(node)`, CLI agents)."""
        asks = getattr(self.backend, "gives_agents_a_shell", None)
        try:
            return bool(asks(node)) if asks is not None else False
        except Exception:  # a backend that cannot be built: the node fails when it runs; every file meanwhile
            return True

    def command_workdir(self, branch: str | None) -> Path:
        """Where a tool node's command runs (`tool_workdir`), made a full checkout first."""
        self.full_checkout(branch)
        return self.tool_workdir(branch)

    def full_checkout(self, branch: str | None) -> None:
        """Make `branch`'s lazy worktrees full checkouts before a command or a CLI agent runs there."""
        if self.branches is not None:
            self.branches.materialize(branch)

    def command_runner(self) -> CommandRunner | None:
        """The run's command runner for tool nodes and hooks: every call may write the session's worktrees."""
        runner = self.ports.command_runner
        if runner is None:
            return None
        return WritableRoots(runner, self.writable_roots, lambda: [str(path) for path in self.protected_paths()])

    def writable_roots(self) -> list[str]:
        """The directories the run's commands work in: the session worktrees (or the project root) and the
        parallel branches' worktrees."""
        roots = [str(context.root) for context in self.repo_contexts().values()]
        for session in self.branches.sessions() if self.branches is not None else []:
            roots += [str(context.worktree_path) for context in session.contexts.values()]
        return roots

    def tool_workdir(self, branch: str | None = None) -> Path:
        """Where tool nodes run: the session (or `branch`'s) worktree when there is exactly one repo, else
        the project."""
        contexts = self.repo_contexts(branch)
        if self.workspace is not None and len(contexts) == 1:
            return next(iter(contexts.values())).root
        return self.layout.root

    def on_turn_factory(self, node: Node, stage: StageRun) -> OnTurn:
        """Each agent turn: committed by the workspace (when there is one), recorded, then reported."""

        def record(turn: AgentTurn) -> None:
            self._record_turn(node, stage, turn)

        workspace = self.workspace_for(stage.branch)
        on_turn = workspace.on_turn_wrapper(record) if workspace is not None else record
        clock = self._turn_clock()
        if clock is None:
            return on_turn

        def traced(turn: AgentTurn) -> None:  # when the agent handed it over, before its commits: its span's times
            on_turn(evolve(turn, ended_at=clock()))

        return traced

    def _turn_clock(self) -> Callable[[], datetime] | None:
        """What stamps each turn's `ended_at` in a traced run (None untraced: nothing to pay for)."""
        return self.ports.clock.now if self.watchers.traced else None

    def _record_turn(self, node: Node, stage: StageRun, turn: AgentTurn) -> None:
        """Price the turn, record it, report it; once a budget is reached, the stage stops at this turn boundary."""
        turn = self.spending.price(turn, stage.branch)
        self.recorder.record_agent_turn(turn, stage.branch)
        stage.emit(AgentTurnCompleted, node_id=node.id, turn=turn)
        stop = self.spending.add(turn, stage.branch)
        if stop is not None:
            stage.cancel.stop_turns(stop)

    def _load_child(self, path: str) -> Graph:
        prepared = prepare_pipeline(
            path,
            transforms=self.extensions.transforms,
            extra_rules=self.extensions.lint_rules,
            known_types=self.extensions.handler_types,
        )
        if prepared.errors:
            raise OrchestraError(f"child pipeline {path}: {ValidationError(list(prepared.diagnostics))}")
        return prepared.graph

    # Running ---------------------------------------------------------------------------------------
    def execute(self, stop: Cancellation | None = None) -> RunResult:
        """Run (or continue) the pipeline to its end; pipeline failures are results, not exceptions.

        A KeyboardInterrupt records the session as interrupted (resumable) and is raised again; any other
        exception (a bug, such as a handler's StageCrashed) records the session failed and is raised again.
        `stop`, when cancelled, stops the run before its next node and cancels the attempt running now (the
        fleet's `orchestra cancel`).
        """
        if self.engine is None:
            self.open()
        assert self.engine is not None
        initial = self.initial_context
        if self.start.checkpoint is not None:
            self._ensure_manifest(initial)
        checkpoint = self.start.checkpoint
        if checkpoint is not None:  # resume: the given values (and the session id) override the restored ones
            overrides = {**initial, "internal.session_id": self.session_id}
            checkpoint = evolve(checkpoint, context={**checkpoint.context, **overrides})
        if self.start.kind == RESUME:  # the node the stopped run was in is recorded as interrupted, then runs again
            self.recorder.record_interrupted_nodes()
        try:
            result = self.engine.run(
                self.graph,
                session_id=self.session_id,
                logs_root=self.logs_root,
                initial_context=initial if checkpoint is None else None,
                resume_from=checkpoint,
                stop=stop,
            )
        except KeyboardInterrupt:
            self.record_failure("interrupted", interrupted=True)
            self.watchers.notify_end("interrupted")
            raise
        except Exception as error:  # a bug (StageCrashed included): the session records it failed, the caller reports
            bug = not isinstance(error, OrchestraError)
            reason = f"internal error: {type(error).__name__}: {error}" if bug else str(error)
            with suppress(Exception):
                self.record_failure(reason)
            self.watchers.notify_end("fail", reason)
            self._roll_back_after(error)
            raise
        self.remotes.finish(result.succeeded, self.workspace.snapshot() if self.workspace is not None else {})
        if not result.succeeded and result.status is not RunStatus.BUDGET_EXCEEDED:  # that one is resumable
            self.roll_back_if_asked()
        if stop is not None and stop.is_set():  # `orchestra cancel`, a cancel over HTTP
            self.watchers.notify_end("cancelled", stop.reason)
        else:
            self.watchers.notify_end(result.status.value, result.failure_reason)
        self.watchers.trace_end(result.status.value, result.failure_reason)
        return result

    @property
    def rolls_back_on_failure(self) -> bool:
        """Whether a failed run is rolled back: the option when given, else `workspace.rollback`."""
        chosen = self.options.rollback_on_failure
        return chosen if chosen is not None else self.options.settings.workspace.rollback == "on_failure"

    def roll_back_if_asked(self) -> None:
        """After a failed run, with rollback on failure: every workspace repo back as it was before the run,
        each recorded as a SessionRolledBack event (see workspace/rollback.py).

        Raises:
            WorkspaceError: Some repo could not be rolled back (the others were).
        """
        if not self.rolls_back_on_failure or self.workspace is None or self.ports.git is None or self._rolled_back:
            return
        from orchestra_core.workspace.rollback import roll_back_session

        worktrees = self._workspace_manager({}).worktrees_dir(self.session_id)
        self._rolled_back = {
            event.repo: RepoHead(event.branch, event.head_sha, event.base_sha)
            for event in roll_back_session(self.workspace, self.ports.git, worktrees, self._on_workspace_event)
        }

    def _roll_back_after(self, error: Exception) -> None:
        """Roll back after the run ended with `error`; a rollback failure is added to it as a note."""
        try:
            self.roll_back_if_asked()
        except Exception as failure:
            error.add_note(str(failure))

    def _ensure_manifest(self, initial_context: Mapping[str, Any]) -> None:
        """A replay, or a resume where the run directory is missing, starts its run directory with a manifest,
        so the directory stays a complete mirror (and a resume from it works)."""
        directory = self.ports.run_directories.open(self.logs_root)
        if directory.read_manifest() is None:
            now = self.ports.clock.now()
            directory.write_manifest(manifest_for(self.graph, self.session_id, directory.root, now, initial_context))

    @property
    def lease(self) -> SessionLease | None:
        """The session's lock, while the run holds it."""
        return self._lease

    def record_failure(self, reason: str, *, interrupted: bool = False) -> None:
        """Mark the session failed (or interrupted) when the run could not start or was stopped."""
        self.watchers.trace_end("interrupted" if interrupted else StageStatus.FAIL.value, reason)
        if self.ports.store is None:
            return
        kind = records.LifecycleEvent.INTERRUPTED if interrupted else records.LifecycleEvent.FAILED
        status = None if interrupted else StageStatus.FAIL
        record = records.PipelineLifecycle(kind, self.pipeline_name, status=status, error=reason)
        with suppress(Exception):  # the turns that waited for a checkpoint go first, as far as they can
            self.recorder.flush()
        append_record(self.ports.store, self.session_id, record)

    def repo_heads(self) -> dict[str, RepoHead]:
        """Each workspace repo's session branch, base and current head."""
        if self.workspace is None:
            return {}
        if self._rolled_back:  # the branches are gone: where they were
            return dict(self._rolled_back)
        shas = self.workspace.snapshot()
        return {name: evolve(head, sha=shas.get(name, head.sha)) for name, head in self._recorded_heads().items()}

    def _recorded_heads(self) -> dict[str, RepoHead]:
        """Each workspace repo's session branch and base, for the recorder: the heads themselves come with each
        checkpoint (the engine read them from git just before), so git is not asked again here."""
        if self.workspace is None:
            return {}
        return {
            name: RepoHead(context.branch_name, context.head_sha, context.base_sha)
            for name, context in self.workspace.contexts.items()
        }

    def close(self) -> None:
        """Write what the recorder holds, wait (bounded) for the notifications under way, then release the
        backend, the checkout locks and the session lock (each at most once)."""
        with suppress(Exception):  # pushes what checkpoints asked for (a failed push is only a warning; a store
            self.remotes.close()  # failing to record one must not keep the locks below held)
        self.watchers.close_notifications()  # before the recorder closes: a delivery that failed is recorded
        with suppress(Exception):  # a store failing here was reported by the run already
            self.recorder.close()
        close = getattr(self.backend, "close", None)
        self.backend = None
        if close is not None:
            with suppress(Exception):
                close()
        if self.branches is not None:  # lazy worktrees kept (a conflict, a failed run): their git readers end
            self.branches.close()
        if self.workspace is not None:  # the session's own, when they were made lazy
            self.workspace.close()
        while self._checkout_leases:
            self._checkout_leases.pop().release()
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        # last, once the locks are free: sending may take `flush_timeout`
        self.watchers.close_trace(self.options.settings.telemetry.flush_timeout)

    # Watchers ----------------------------------------------------------------------------------------------
    def _watchers(self, *, created: bool) -> RunWatchers:
        """The run's trace (with a tracer) and notifications (with a notifier), subscribed to its events; without
        either port, nothing of them is imported."""
        run = WatchedRun(
            self.start, self.pipeline_name, self.ports.clock, self.events.subscribe, self._notified_cost,
            self._record_notification_failure,
        )  # fmt: skip
        return RunWatchers.start(
            run, store=self.ports.store, tracer=self.ports.tracer, notifier=self.ports.notifier,
            routes=self.options.answer_routes, created=created,
        )  # fmt: skip

    def _notified_cost(self) -> CostTally:
        """What the session has cost, for a notification: read from the store (earlier runs, branches, replayed
        history), else this run's meter when the store cannot be read."""
        try:
            return self.session_cost()
        except Exception:  # a notification never fails for want of a figure
            return self.spending.spending().cost

    def _record_notification_failure(self, record: records.NotificationFailed) -> None:
        """A notification no target took is a turn of the session (`orchestra status` shows it)."""
        if isinstance(self.recorder, SessionRecorder):
            with suppress(Exception):  # best effort: the store may be gone with the end of the process
                self.recorder.record_now(record)

    def _recorder(self) -> SessionRecorder | NoRecorder:
        if self.ports.store is None:
            return NoRecorder()
        return SessionRecorder(
            self.ports.store,
            self.session_id,
            pipeline_name=self.pipeline_name,
            source=self.start.source,
            repo_heads=self._recorded_heads,
            on_snapshot=self.events.deliver,
        )
