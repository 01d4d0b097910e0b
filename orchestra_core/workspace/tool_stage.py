"""A tool stage's work as a turn of that stage: what its command changed in the worktrees it could write,
committed on the session branch (a parallel branch's, inside one) with a deterministic message and trailers
that name the command and how it ended."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from attrs import frozen

from orchestra_core.model.turn import TOOL_STAGE_MODEL, TOOL_STAGE_PROVIDER, AgentTurn, ToolCall
from orchestra_core.ports.command_runner import CommandResult
from orchestra_core.workspace.messages import MAX_SUMMARY
from orchestra_core.workspace.worktree_watch import WorktreeWatch

COMMAND_TRAILER = "Orchestra-Command"
EXIT_CODE_TRAILER = "Orchestra-Exit-Code"
SHELL_TOOL = "shell"  # the tool call a tool stage's turn records (TOOL_NAME of its hooks)
COMMAND_CHARS = 200  # of the command in its trailer
LISTED_FILES = 50  # in the message body; the commit itself has them all


def one_line(text: str, limit: int) -> str:
    """`text` on one line (each run of whitespace, line breaks included, one space; other control characters
    dropped), cut to `limit` characters with `...`."""
    flat = " ".join("".join(c for c in text if c.isprintable() or c.isspace()).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


@frozen
class ToolStageRun:
    """A tool stage's command and how it ended."""

    node_id: str
    command: str
    result: CommandResult

    @property
    def ending(self) -> str:
        """`exit code 3`, `timed out` or `cancelled`."""
        if self.result.timed_out:
            return "timed out"
        if self.result.cancelled or self.result.exit_code is None:
            return "cancelled"
        return f"exit code {self.result.exit_code}"

    def turn(self, files: Sequence[str]) -> AgentTurn:
        """The stage's turn: its `repo:path` changes, its command as a `shell` call."""
        command = {"command": self.command}
        call = ToolCall(SHELL_TOOL, command, result=self.ending, duration_s=self.result.duration_s)
        return AgentTurn(
            node_id=self.node_id, turn_number=0, model=TOOL_STAGE_MODEL, provider=TOOL_STAGE_PROVIDER,
            tool_calls=(call,), files_written=tuple(files), duration_s=self.result.duration_s,
        )  # fmt: skip

    def message(self, paths: Sequence[str]) -> str:
        """The commit message: which stage ran which command, how it ended, the files."""
        subject = one_line(f"Tool stage {self.node_id}: {self.command}", MAX_SUMMARY)
        listed = [f"- {path}" for path in paths[:LISTED_FILES]]
        if len(paths) > LISTED_FILES:
            listed.append(f"- ... and {len(paths) - LISTED_FILES} more")
        return f"{subject}\n\n{self._ended()}; it changed:\n" + "\n".join(listed)

    def _ended(self) -> str:
        if self.result.timed_out or self.result.cancelled or self.result.exit_code is None:
            return f"The command {'timed out' if self.result.timed_out else 'was cancelled'} (its processes were killed)"
        return f"The command exited with code {self.result.exit_code}"

    def trailers(self) -> dict[str, str]:
        """`Orchestra-Command` (one line, capped) and `Orchestra-Exit-Code` (`timed-out`/`cancelled` when killed)."""
        code = self.result.exit_code
        if self.result.timed_out:
            exit_code = "timed-out"
        elif self.result.cancelled or code is None:
            exit_code = "cancelled"
        else:
            exit_code = str(code)
        return {COMMAND_TRAILER: one_line(self.command, COMMAND_CHARS), EXIT_CODE_TRAILER: exit_code}


class ToolStageWatch:
    """The worktrees a tool stage may write, watched from before its command: `finish` commits what changed since.

    Only what changed while the stage ran is its work (files dirty before it, and not touched, stay as they
    are); the run's own state (`protected`: its run directory or store, where they lie inside a checkout) is
    never committed.

    Args:
        watch: A WorktreeWatch over every workspace repo's worktree the stage may write, taken before it ran.
        commit: Commits the stage's turn (raises WorkspaceCommitError as per-turn commits do).
        protected: Directories and files of Orchestra's own state.
    """

    def __init__(
        self,
        watch: WorktreeWatch,
        commit: Callable[[AgentTurn, ToolStageRun], AgentTurn],
        protected: Sequence[Path] = (),
    ) -> None:
        self._watch = watch
        self._commit = commit
        self._roots: Mapping[str, Path] = {repo: Path(os.path.realpath(root)) for repo, root in watch.roots.items()}
        self._protected = tuple(Path(os.path.realpath(path)) for path in protected)

    def finish(self, run: ToolStageRun) -> AgentTurn | None:
        """Commit what the stage changed as its turn (None when it changed nothing).

        Raises:
            WorkspaceCommitError: A repo's commit failed (`error.turn` has the commits that worked).
            GitError: `git status` failed.
        """
        changed = [entry for entry in self._watch.changed() if not self._is_protected(entry)]
        if not changed:
            return None
        return self._commit(run.turn(changed), run)

    def _is_protected(self, entry: str) -> bool:
        """Whether the path lies in the run's state inside its worktree (state holding the worktree itself, as
        `.orchestra/` holds the session worktrees, does not count)."""
        repo, _, path = entry.partition(":")
        root = self._roots[repo]
        where = root / path
        return any(
            protected != root and protected.is_relative_to(root) and (where == protected or where.is_relative_to(protected))
            for protected in self._protected
        )
