"""What a run lends the parts it builds: the agent runtime its backend factory sees, and stand-ins for the
recorder and the prompt library when the run has none."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.resolver import AgentResolver
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.engine.branches import BRANCH_KEY
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.prompt_layers import LayerKind, PromptLayer
from orchestra_core.model.turn import AgentTurn
from orchestra_core.session.checkpoints import RepoHead

if TYPE_CHECKING:
    from orchestra_core.agents.hooks import ToolHooks
    from orchestra_core.model.graph import Graph
    from orchestra_core.model.layout import ProjectLayout
    from orchestra_core.model.workspace_events import WorkspaceEvent
    from orchestra_core.ports.command_runner import CommandRunner
    from orchestra_core.runs.ports import RunPorts
    from orchestra_core.workspace.worktree_watch import WorktreeWatch


class _Run(Protocol):
    """What the agent runtime reads of its run (`PipelineRun`)."""

    graph: Graph
    layout: ProjectLayout
    ports: RunPorts
    workspace: Any

    @property
    def resolver(self) -> AgentResolver: ...

    @property
    def logs_root(self) -> str: ...

    def repo_contexts(self, branch: str | None = None) -> dict[str, RepoContext]: ...

    def command_runner(self) -> CommandRunner | None: ...

    def tool_workdir(self, branch: str | None = None) -> Path: ...

    def full_checkout(self, branch: str | None) -> None: ...


class RunAgentRuntime:
    """The run as its backend factory sees it (`AgentRuntime`)."""

    def __init__(self, run: _Run) -> None:
        self._run = run

    @property
    def resolver(self) -> AgentResolver:
        return self._run.resolver

    @property
    def project_root(self) -> Path:
        return self._run.layout.root

    def tools_for(self, node: Node, agent: Any, context: Context, tracker: WriteTracker) -> list[AgentTool]:
        return self._run.resolver.tools(agent, self._run.repo_contexts(_branch(context)), tracker)

    def tool_hooks(self, node: Node, context: Context) -> ToolHooks | None:
        runner = self._run.command_runner()
        if runner is None:
            return None

        def log(result: Any) -> None:
            context.append_log(f"tool hook {result}")

        from orchestra_core.agents.hooks import ToolHooks

        workdir = str(self._run.tool_workdir(_branch(context)))
        stage_dir = str(context.get("internal.stage_dir") or "")
        hooks = ToolHooks.for_node(
            node, self._run.graph, runner, cwd=workdir, stage_dir=stage_dir, logs_root=self._run.logs_root, on_result=log
        )
        if hooks.active:  # hook commands read the worktree's files
            self._run.full_checkout(_branch(context))
        return hooks

    def repos(self, context: Context | None = None) -> Mapping[str, RepoContext]:
        """The repos a CLI agent works in, with a shell: full checkouts (a lazy branch worktree is made one)."""
        self._run.full_checkout(_branch(context))
        return self._run.repo_contexts(_branch(context))

    def write_tracker(self, context: Context | None = None) -> WriteTracker:
        git = self._run.ports.git
        if git is None or self._run.workspace is None:
            return WriteTracker()
        from orchestra_core.workspace.captures import WorktreeCapture

        return WriteTracker(WorktreeCapture(git, {name: repo.root for name, repo in self.repos(context).items()}))

    def watch_worktrees(self, context: Context | None = None) -> WorktreeWatch | None:
        git = self._run.ports.git
        if git is None or self._run.workspace is None:
            return None
        from orchestra_core.workspace.worktree_watch import WorktreeWatch

        return WorktreeWatch(git, {name: repo.root for name, repo in self.repos(context).items()})


def _branch(context: Context | None) -> str | None:
    """The parallel branch a node runs in, from its context (None on the main line)."""
    branch = context.get(BRANCH_KEY) if context is not None else None
    return branch if isinstance(branch, str) and branch else None


class NoRecorder:
    """Stands in for the session recorder when the run has no store."""

    def on_event(self, event: Any) -> None:
        return None

    def save(self, checkpoint: Any) -> None:
        return None

    def record_agent_turn(self, turn: AgentTurn, branch: str | None = None) -> None:
        return None

    def record_interrupted_nodes(self) -> list[str]:
        return []

    def record_start(self, record: Any) -> None:
        return None

    def continue_from(self, heads: Mapping[str, RepoHead]) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def on_workspace_event(self, event: WorkspaceEvent) -> None:
        return None


class NoPromptLayers:
    """A prompt library without layers (agents then use the node's prompt alone)."""

    def find(self, kind: LayerKind, name: str) -> PromptLayer | None:
        return None

    def locations(self, kind: LayerKind) -> tuple[str, ...]:
        return ()
