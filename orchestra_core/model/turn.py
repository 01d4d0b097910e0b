"""AgentTurn: what one iteration of an agent loop did (seed 003, CodergenBackend; v2 with commits)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from attrs import evolve, field, frozen

from orchestra_core.model.immutable import frozen_map, str_tuple

# How the error of a tool call Orchestra refused to let the agent make begins (an ACP agent's permission request
# its policy denied); the rest says why.
PERMISSION_DENIED = "denied by Orchestra's permission policy"


@frozen
class ToolCall:
    """One tool call the model made: the tool's Orchestra name (`repo:tool`), arguments and result.

    `started_at` and `duration_s` say when it ran, where the backend saw it (for traces); they are not stored,
    and two calls that differ only in them are equal. A call Orchestra did not permit has an error starting with
    PERMISSION_DENIED (`denied`).
    """

    name: str
    args: Mapping[str, Any] = field(factory=dict, converter=frozen_map)
    call_id: str = ""
    result: str | None = None
    error: str | None = None
    started_at: datetime | None = field(default=None, eq=False, repr=False)
    duration_s: float | None = field(default=None, eq=False, repr=False)

    @property
    def denied(self) -> bool:
        """Whether Orchestra's permission policy refused the call."""
        return self.error is not None and self.error.startswith(PERMISSION_DENIED)


@frozen
class TokenUsage:
    """Prompt and completion token counts.

    `prompt_tokens` counts every input token, cached ones included; `cache_read_tokens` (read from the
    provider's prompt cache) and `cache_write_tokens` (written to it) are the parts of them that providers bill
    at other prices.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@frozen
class FileVersion:
    """A file's content as git stores it, captured when a tool wrote it: a blob already in the repo's objects,
    so the turn's commit holds what the turn wrote even when the file changed again before the commit.

    Attributes:
        mode: The tree entry's mode (`100644`, `100755` or `120000`); "" when the file did not exist.
        blob: The blob's id; "" when the file did not exist (the commit deletes it).
    """

    mode: str = ""
    blob: str = ""

    @property
    def deleted(self) -> bool:
        return not self.blob


@frozen
class TurnCommit:
    """A commit the workspace made for a turn in one repo."""

    repo: str
    sha: str
    message: str
    branch: str = ""


TOOL_STAGE_MODEL = "tool_command"  # the `model` of a tool stage's turn: a command ran, not an LLM
TOOL_STAGE_PROVIDER = "tool"


def _messages(items: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(items)


def _tool_calls(items: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(items)


def _commits(items: Iterable[TurnCommit]) -> tuple[TurnCommit, ...]:
    return tuple(items)


@frozen
class AgentTurn:
    """Data emitted after each turn of an agent loop.

    `files_written` entries are `repo:path` (path relative to the repo root). `commits` is filled by
    the workspace layer after it commits the turn's writes; `git_sha`/`commit_message` give the first
    commit for readers of the single-repo AgentTurn v2 shape. `untracked` marks a turn made up by the
    workspace safety net: changes found in a worktree that no tool reported (a CLI agent's own tools, a
    shell redirect), committed apart with an `Orchestra-Untracked: true` trailer. `file_versions` holds, by
    `repo:path`, the content each file had when the turn's tool wrote it (the tracker's capture); the commit
    takes those, and files without one as they are when it is made. It is not stored: the commit holds it.
    `cost_usd` is what the turn cost in US dollars (None: unknown, e.g. no price for its model). When a
    fallback model answered (failover), `model` names it, `requested_model` the one asked for first and
    `fallback_reason` why it switched. `ended_at` is when the agent handed the turn over (its reply and tool
    calls done, before its commits), set by a traced run; it is not stored.
    A tool stage's work is a turn too: model `tool_command`, provider `tool`, its command as a `shell` tool
    call (`by_tool_stage`).
    """

    node_id: str
    turn_number: int
    model: str
    provider: str
    messages: tuple[Mapping[str, Any], ...] = field(default=(), converter=_messages)
    tool_calls: tuple[ToolCall, ...] = field(default=(), converter=_tool_calls)
    files_written: tuple[str, ...] = field(default=(), converter=str_tuple)
    token_usage: TokenUsage = field(factory=TokenUsage)
    agent_state_ref: str | None = None
    duration_s: float = 0.0
    commits: tuple[TurnCommit, ...] = field(default=(), converter=_commits)
    untracked: bool = False
    file_versions: Mapping[str, FileVersion] = field(factory=dict, converter=frozen_map, repr=False)
    cost_usd: float | None = None
    requested_model: str = ""
    fallback_reason: str = ""
    ended_at: datetime | None = field(default=None, eq=False, repr=False)

    @property
    def git_sha(self) -> str | None:
        return self.commits[0].sha if self.commits else None

    @property
    def commit_message(self) -> str | None:
        return self.commits[0].message if self.commits else None

    @property
    def by_tool_stage(self) -> bool:
        """Whether a tool stage's command made this turn (no LLM: nothing to continue on resume)."""
        return self.model == TOOL_STAGE_MODEL and self.provider == TOOL_STAGE_PROVIDER

    def with_commits(self, commits: tuple[TurnCommit, ...]) -> AgentTurn:
        return evolve(self, commits=commits)

    def versions_in(self, repo: str) -> dict[str, FileVersion]:
        """The captured versions of the turn's files in `repo`, by repo-relative path."""
        prefix = f"{repo}:"
        return {entry[len(prefix) :]: version for entry, version in self.file_versions.items() if entry.startswith(prefix)}

    def writes_by_repo(self) -> dict[str, list[str]]:
        """Group `files_written` by repo name, keeping order."""
        grouped: dict[str, list[str]] = {}
        for entry in self.files_written:
            repo, _, path = entry.partition(":")
            grouped.setdefault(repo, []).append(path)
        return grouped
