"""What a run is assembled from: the adapters of the ports, the settings, and the extensions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import field, frozen

from orchestra_core.engine.memory import MemoryRunDirectories
from orchestra_core.model.budget import Budget
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.ports.clock import Clock, SystemClock
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.ports.commit_messages import CommitMessageGenerator
from orchestra_core.ports.dispatcher import DEFAULT_QUEUE, Dispatcher
from orchestra_core.ports.fleet import FleetLedger
from orchestra_core.ports.git import Git
from orchestra_core.ports.git_remotes import GitRemotes
from orchestra_core.ports.interviewer import Interviewer
from orchestra_core.ports.prompt_library import PromptLibrary
from orchestra_core.ports.run_directory import RunDirectoryFactory
from orchestra_core.ports.session_locks import SessionLocks
from orchestra_core.ports.session_store import SessionStore
from orchestra_core.ports.tracer import Tracer

if TYPE_CHECKING:  # named in AgentRuntime's signatures only; a simulated run imports none of them
    from orchestra_core.agents.hooks import ToolHooks
    from orchestra_core.agents.repo_context import RepoContext
    from orchestra_core.agents.resolver import AgentResolver
    from orchestra_core.agents.tools import AgentTool, WriteTracker
    from orchestra_core.model.notifications import AnswerRoutes
    from orchestra_core.ports.notifier import Notifier
    from orchestra_core.workspace.worktree_watch import WorktreeWatch


@runtime_checkable
class AgentRuntime(Protocol):
    """What a run offers the backend it builds: each node's agent, tools and tool hooks.

    The tools of a node depend on the run's repos (its session worktrees), known only once the run's
    workspace is set up, which is why a backend that runs tools is built by a `BackendFactory`.
    """

    @property
    def resolver(self) -> AgentResolver:
        """Resolves a node's agent: prompt layers, model and provider, tool names."""
        ...

    @property
    def project_root(self) -> Path:
        """The project's root directory (where `.orchestra/` lives)."""
        ...

    def tools_for(self, node: Node, agent: Any, context: Context, tracker: WriteTracker) -> list[AgentTool]:
        """The node's agent tools, bound to the run's repos and the turn's write tracker."""
        ...

    def tool_hooks(self, node: Node, context: Context) -> ToolHooks | None:
        """The node's pre/post tool-call hooks (None when it has none)."""
        ...

    def repos(self, context: Context | None = None) -> Mapping[str, RepoContext]:
        """The run's repos by name; each root is the session worktree (the project root as `project`
        when orchestra.yaml names no repos). Given a node's context, the repos of the parallel branch it
        runs in (its own worktrees when the branch has them)."""
        ...

    def write_tracker(self, context: Context | None = None) -> WriteTracker:
        """A write tracker for one node execution whose writes are captured as they are recorded (each file
        stored as a blob in its repo at once), for a backend whose agent goes on while a turn is committed;
        a plain tracker when the run has no workspace repos or no git port."""
        ...

    def watch_worktrees(self, context: Context | None = None) -> WorktreeWatch | None:
        """A WorktreeWatch over the run's session worktrees (of the node's parallel branch, given its
        context), its baseline taken now; None when the run has no workspace repos or no git port (nothing
        there would be committed)."""
        ...


BackendFactory = Callable[[AgentRuntime], CodergenBackend | None]
"""Builds a run's backend from the run's agent runtime; None means simulation."""


@frozen(kw_only=True)
class FleetPorts:
    """What a run needs to send the branches of its fan-outs to a fleet of workers (docs/fleet.md).

    Attributes:
        dispatcher: Sends the branch tasks.
        ledger: Where each branch stands, shared with the workers.
        runner: Who runs the session (a worker's name, or `orchestra run` on a host), as branch entries name it.
        queues: The queues whose branches this process may run itself when no worker took them in time.
        default_queue: The queue of branches whose nodes name none.
        claim_after_s: How long a branch waits for a worker before this process runs it itself.
        poll_s: How often the runner looks at its branches' entries while it waits for them.
        no_worker_grace_s: A branch of a queue this process does not serve fails when no live worker (a heartbeat
            within the last 15 s) serves that queue after it waited this long.
        resend_after_s: A branch still queued after this long while a live worker of its queue has a free slot is
            sent again (its message was lost with a worker that had reserved it, which Redis would only give back
            after its visibility timeout).
    """

    dispatcher: Dispatcher
    ledger: FleetLedger
    runner: str
    queues: tuple[str, ...] = (DEFAULT_QUEUE,)
    default_queue: str = DEFAULT_QUEUE
    claim_after_s: float = 2.0
    poll_s: float = 0.2
    no_worker_grace_s: float = 15.0
    resend_after_s: float = 30.0


@frozen(kw_only=True)
class RunPorts:
    """The adapters one run works with. Every port but the run directories is optional.

    Attributes:
        run_directories: Opens the run directory (logs root); default: kept in memory.
        store: The session store; None: the run is not recorded (it cannot be resumed or replayed).
        backend: The LLM backend, or a factory that builds it for the run; None: simulation.
        interviewer: Answers human gates; None: a gate fails saying no interviewer is configured.
        command_runner: Runs tool nodes' commands and project tools; None: tool nodes fail.
        git: The git port, needed when `settings.workspace.repos` names repos.
        git_remotes: Clone, fetch and push; None: no remotes (a repo with `remote` is then an error).
        commit_messages: Writes per-turn commit messages; None: the deterministic message.
        prompt_library: Where agents' prompt layers come from; None: no layer files.
        session_locks: Keeps two runners out of one session; None: no locking.
        clock: Time; default: the system clock.
        fleet: Sends the branches of main-line fan-outs to a fleet of workers; None: they run in this process.
        notifier: Tells the `notify:` targets about the run's end and its waiting questions; None: nothing is sent
            (and nothing of notifications is imported).
        tracer: Where the run's spans go (OpenTelemetry); None: the run is not traced and builds no span.
    """

    run_directories: RunDirectoryFactory = field(factory=MemoryRunDirectories)
    store: SessionStore | None = None
    backend: CodergenBackend | BackendFactory | None = None
    interviewer: Interviewer | None = None
    command_runner: CommandRunner | None = None
    git: Git | None = None
    git_remotes: GitRemotes | None = None
    commit_messages: CommitMessageGenerator | None = None
    prompt_library: PromptLibrary | None = None
    session_locks: SessionLocks | None = None
    clock: Clock = field(factory=SystemClock)
    fleet: FleetPorts | None = None
    notifier: Notifier | None = None
    tracer: Tracer | None = None


@frozen(kw_only=True)
class RunOptions:
    """How one run goes, besides its adapters.

    Attributes:
        settings: orchestra.yaml's settings (agents, workspace repos, tools); default: none configured.
        project_root: The project root; default: the current directory.
        logs_root: The run directory; default: `.orchestra/runs/<session-id>` under the project root.
        initial_context: Values the run starts with (`--set`); on resume they override the restored ones.
        max_node_visits: Node executions after which the run stops as looping (default: the graph's).
        observers: Extra engine event observers (objects with `on_event`).
        on_event: Called with every engine event, workspace event and agent turn, as it happens.
        rollback_on_failure: After a failed run, put every workspace repo back as it was before the run
            (branches and worktrees removed, the work kept under `refs/orchestra/abandoned/`); None:
            `workspace.rollback` in the settings decides. An interrupted run is never rolled back.
        answer_routes: Where the run's waiting questions can be answered, for `needs_input` notifications (the
            CLI's `orchestra attach`, the page of `orchestra serve`); None: nowhere to name.
        budget: This run's limits (`--max-cost`, `--max-tokens`, `--max-wall-time`), over the graph's budget
            attributes and orchestra.yaml's `budget:`, key by key; None: theirs.
    """

    settings: OrchestraSettings = field(factory=OrchestraSettings)
    project_root: Path = field(factory=Path.cwd, converter=Path)
    logs_root: str | None = None
    initial_context: Mapping[str, Any] = field(factory=dict)
    max_node_visits: int | None = None
    observers: Sequence[Any] = ()
    on_event: Callable[[Any], None] | None = None
    rollback_on_failure: bool | None = None
    answer_routes: AnswerRoutes | None = None
    budget: Budget | None = None
