"""The run's side of the tool handler's ToolTurns seam: a tool stage's changes committed and recorded as its turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from attrs import evolve

from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.tool import ToolTurnEnd
from orchestra_core.model.graph import Node
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.command_runner import CommandResult

if TYPE_CHECKING:  # a run without workspace repos needs none of these
    from orchestra_core.workspace.session import WorkspaceSession


class RunToolTurns:
    """Watches the worktrees of a tool stage's workspace (its parallel branch's, else the session's) before its
    command; afterwards commits what changed as a turn of the stage and records it, as an agent turn is.

    Args:
        workspace_for: The workspace of a parallel branch (None: the main line); None without workspace repos.
        protected: The run's own state (run directory, store), never committed where it lies in a checkout.
        record: Records a turn (the session recorder, then an AgentTurnCompleted event).
        clock: In a traced run, stamps each turn's `ended_at` when its command ended (None: not stamped).
    """

    def __init__(
        self,
        workspace_for: Callable[[str | None], WorkspaceSession | None],
        protected: Callable[[], Sequence[Path]],
        record: Callable[[Node, StageRun, AgentTurn], None],
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._workspace_for = workspace_for
        self._protected = protected
        self._record = record
        self._clock = clock

    def __call__(self, node: Node, stage: StageRun, command: str) -> ToolTurnEnd:
        workspace = self._workspace_for(stage.branch)
        if workspace is None:
            return _nothing
        watch = workspace.watch_tool_stage(self._protected())

        def end(result: CommandResult) -> None:
            from orchestra_core.workspace.errors import WorkspaceCommitError
            from orchestra_core.workspace.tool_stage import ToolStageRun

            ended = self._clock() if self._clock is not None else None
            try:
                turn = watch.finish(ToolStageRun(node.id, command, result))
            except WorkspaceCommitError as error:  # recorded with the commits that worked; the stage then fails
                if error.turn is not None:
                    self._record(node, stage, _stamped(error.turn, ended))
                raise
            if turn is not None:
                self._record(node, stage, _stamped(turn, ended))

        return end


def _nothing(result: CommandResult) -> None:
    return None


def _stamped(turn: AgentTurn, ended: datetime | None) -> AgentTurn:
    return evolve(turn, ended_at=ended) if ended is not None else turn
