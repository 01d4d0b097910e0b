"""One node's run of an ACP agent: the conversation, its updates read into turns, its requests answered.

It is the CLI agents' execution (cli_agent/execution.py: turns, the writes each claims, the untracked-writes
net, costs, budgets) with the conversation in place of the output stream. The agent's file writes come as
`fs/write_text_file` requests, in order with its updates, and run as calls of the node's `write-file` tool through
the tool host, so the turn in progress claims them exactly as it claims the calls of Orchestra's MCP server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp import RequestError
from attrs import evolve

from orchestra_adapters.backends.acp.channel import AgentPipes
from orchestra_adapters.backends.acp.conversation import Conversation, Ending
from orchestra_adapters.backends.acp.files import OutsideWorktree, locate, read_lines, write_inside
from orchestra_adapters.backends.acp.names import orchestra_tool_of
from orchestra_adapters.backends.acp.updates import UpdateMapper
from orchestra_adapters.backends.cli_agent.events import AgentEvent, AgentResult, ToolFinished, ToolStarted
from orchestra_adapters.backends.cli_agent.execution import Execution
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.backends.cli_agent.turns import TurnAssembler, TurnDraft
from orchestra_adapters.process.sandbox import SandboxUnavailable
from orchestra_core.agents.tools import provider_safe_name
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.money import Money
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import PERMISSION_DENIED, TokenUsage, ToolCall

INVALID_PARAMS = -32602  # JSON-RPC's code for a request whose parameters are refused
RESOURCE_NOT_FOUND = (
    -32002
)  # ACP's code for a file that does not exist (an agent about to create it reads it first)
MAX_READ_BYTES = 10 * 1024 * 1024
_STOPPED = {
    "max_tokens": "it ran out of tokens (max_tokens)",
    "max_turn_requests": "it reached its limit of model requests (max_turn_requests)",
    "refusal": "the model refused (refusal)",
    "cancelled": "it cancelled the prompt itself",
}


class AcpExecution(Execution):
    """A node's run of an ACP agent (the adapter's name, `acp`, and provider name its turns)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._mapper = UpdateMapper(self._tool_name_of)
        self._denials: dict[str, str] = {}
        self._fs_calls = 0
        self._plan_shown: list[dict[str, str]] = []
        self._agent_name = ""
        self.auth_method: str | None = None  # `acp.auth_method`, set by the backend
        self.set_model = ""  # `acp.model`, the model the user set the agent to use; set by the backend

    # The run -------------------------------------------------------------------------------------------
    def _run(self, spec: CliAgentSpec, prompt: str, scratch: Path, assembler: TurnAssembler) -> str | Outcome:
        argv = self._adapter.command(spec, scratch)
        env = {**os.environ, **spec.env}
        node = self._node.id
        try:
            if self._sandbox is not None:
                argv = self._sandboxed(argv, spec, env, scratch)
            if self._cancel is not None:
                self._cancel.raise_if_stopped()
            pipes = AgentPipes(argv, cwd=spec.cwd, env=env)
        except (OSError, SandboxUnavailable) as error:
            return Outcome.fail(f"node {node}: could not start the ACP agent {spec.executable[0]!r}: {error}")
        try:
            conversation = Conversation(
                pipes, self, self._update, cwd=spec.cwd, mcp_servers=spec.mcp_servers, timeout_s=spec.timeout_s,
                cancel=self._cancel, auth_method=self.auth_method,
            )  # fmt: skip
            ending = conversation.run(prompt)
            self._session = ending.session_id or self._session
            if ending.how == "answered" and ending.stop_reason == "end_turn":
                assembler.feed(
                    AgentResult(self._mapper.reply, usage=ending.usage, cost_usd=self._mapper.cost_usd)
                )
            assembler.close()
        finally:
            pipes.close()
            try:
                self._commit_unclaimed()
            finally:
                self._sweep()
        return self._ended(ending, pipes, spec)

    def _ended(self, ending: Ending, pipes: AgentPipes, spec: CliAgentSpec) -> str | Outcome:
        node = self._node.id
        tail = _tail(pipes)
        if ending.how == "answered" and ending.stop_reason == "end_turn":
            outcome = self._host.reported_outcome
            if outcome is not None:
                return outcome if outcome.notes else evolve(outcome, notes=self._mapper.reply)
            return self._mapper.reply
        if ending.how == "answered":
            why = _STOPPED.get(ending.stop_reason, f"it stopped ({ending.stop_reason})")
            return Outcome.fail(f"node {node}: the ACP agent did not finish: {why}")
        if ending.how == "cancelled":
            reason = self._cancel.reason if self._cancel is not None else "cancelled"
            return Outcome.fail(f"node {node}: {reason}; the ACP agent and its processes were stopped")
        if ending.how == "timed_out":
            limit = f"{spec.timeout_s:g} s" if spec.timeout_s is not None else "its time limit"
            return Outcome.fail(
                f"node {node}: the ACP agent did not finish within {limit}; it was stopped; {tail}"
            )
        if ending.how == "malformed":
            return Outcome.fail(f"node {node}: the ACP agent sent {ending.detail}; it was stopped; {tail}")
        if ending.how == "refused":
            return Outcome.fail(f"node {node}: the ACP agent refused: {ending.detail}; {tail}")
        status = pipes.exit_status()
        if status is None:
            exited = "closed its output"
        else:
            exited = f"exited with status {status}" if status >= 0 else f"was ended by signal {-status}"
        return Outcome.fail(f"node {node}: the ACP agent {exited} before it answered; {tail}")

    # The conversation's callbacks (ClientMethods) ---------------------------------------------------------
    def started(self, session_id: str, model: str, agent_name: str) -> None:
        """The session is open: its id, the model and agent name the agent gave (either may be empty)."""
        self._session = session_id
        self._agent_name = agent_name
        # a node's llm_model is not passed to the agent: not claimed either; `acp.model` is the user's word for it
        self._model = model or self.set_model or agent_name

    def _update(self, update: Mapping[str, Any]) -> None:
        for event in self._mapper.map(update):
            self._feed(event)

    def _feed(self, event: AgentEvent) -> None:
        """An event of the conversation: told live (the web view's Agents live), then assembled into its turn."""
        assert self._assembler is not None
        self._live.feed(event)
        self._assembler.feed(event)

    def permission(self, tool_call: Mapping[str, Any]) -> str | None:
        """Allow calls of Orchestra's tools and writes inside the worktree (done through `fs/write_text_file`);
        deny anything else, recorded with the call."""
        if self._tool_name_of(tool_call) is not None:
            return None
        reason = write_inside(tool_call, self._roots)
        if reason is None:
            return None
        call_id = str(tool_call.get("toolCallId") or "")
        self._denials[call_id] = reason
        if not self._mapper.knows(call_id) and self._assembler is not None:
            self._feed(self._mapper.tool_started(tool_call))
            self._feed(ToolFinished(call_id, f"{PERMISSION_DENIED}: {reason}", is_error=True))
        return reason

    def read_text_file(self, path: str, line: int | None, limit: int | None) -> str:
        repo, relative = self._locate(path)
        try:
            _guarded, handle = repo.guard.open_file(relative)
            with handle:
                data = handle.read(MAX_READ_BYTES + 1)
        except FileNotFoundError:
            raise RequestError(RESOURCE_NOT_FOUND, f"no such file: {path}", {"uri": path}) from None
        except (OSError, ValueError, OrchestraError) as error:  # the guard refuses with a ToolPathError
            raise _refused(path, _why(path, error)) from None
        if len(data) > MAX_READ_BYTES:
            raise _refused(path, f"{path} is larger than {MAX_READ_BYTES} bytes")
        return read_lines(data.decode("utf-8", errors="replace"), line, limit)

    def write_text_file(self, path: str, content: str) -> None:
        repo, relative = self._locate(path)
        safe = provider_safe_name(f"{repo.name}:write-file")
        name = self._toolbox.orchestra_name(self._toolbox.safe_name_of(safe))
        if name == safe:
            raise _refused(path, f"this node has no {repo.name}:write-file tool")
        self._fs_calls += 1
        call_id = f"fs-write-{self._fs_calls}"
        arguments = {"path": relative, "content": content}
        self._feed(ToolStarted(call_id, name, arguments))
        executed = self._host.call(safe, arguments)
        self._feed(ToolFinished(call_id, executed.text, is_error=executed.failed))
        if executed.failed:
            raise _refused(path, executed.record.error or "the write failed")

    def _locate(self, path: str) -> tuple[Any, str]:
        try:
            return locate(path, self._roots)
        except OutsideWorktree as error:
            raise _refused(path, str(error)) from None

    # Turns -------------------------------------------------------------------------------------------------
    def _report(self, draft: TurnDraft) -> None:
        for call_id, call in list(draft.calls.items()):
            draft.calls[call_id] = self._as_recorded(call_id, call, draft)
        draft.calls = dict(zip(draft.calls, self._calls.with_arguments(draft.tool_calls()), strict=True))
        plan = self._mapper.plan
        if plan and plan != self._plan_shown:
            self._plan_shown = list(plan)
            lines = "\n".join(f"[{entry['status'] or 'pending'}] {entry['content']}" for entry in plan)
            draft.notes.append({"role": "system", "content": f"The agent's plan:\n{lines}"})
        super()._report(draft)

    def _as_recorded(self, call_id: str, call: ToolCall, draft: TurnDraft) -> ToolCall:
        """A call as the turn records it: a denied one with the denial; one the agent names its own way, by the
        Orchestra tool the host ran with its arguments."""
        reason = self._denials.pop(call_id, None)
        if reason is not None:
            draft.finished.add(call_id)
            return evolve(call, result=None, error=f"{PERMISSION_DENIED}: {reason}")
        if call_id in draft.natives:
            ran = self._calls.name_for(call.args)
            if ran is not None:
                return evolve(call, name=ran)
        return call

    def _cost(self, model: str, usage: TokenUsage) -> float | None:
        """A turn's cost: what the agent's running cost (`usage_update`, in US dollars) rose by since the turns
        before, when it reports one (so a cost budget stops it at the turn that reached it); else priced from the
        turn's tokens, as the CLI agents' turns are."""
        total = self._mapper.cost_usd
        if total is None:
            return super()._cost(model, usage)
        self._settled = True
        turn = max(Money.usd(total) - self._priced, Money())
        self._priced = self._priced + turn
        return turn.to_float()

    def _orchestra_name(self, agent_name: str) -> str:
        return agent_name  # the mapper has named the call already

    def _tool_name_of(self, call: Mapping[str, Any]) -> str | None:
        return orchestra_tool_of(call, self._toolbox)


def _why(path: str, error: BaseException) -> str:
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        return f"no such file: {path}"
    if isinstance(error, IsADirectoryError):
        return f"{path} is a directory"
    return str(error) or type(error).__name__


def _refused(path: str, reason: str) -> RequestError:
    """The error answering a file request Orchestra refuses: the reason is its message (what the agent shows)."""
    return RequestError(INVALID_PARAMS, reason, {"path": path})


def _tail(pipes: AgentPipes) -> str:
    tail = pipes.stderr_tail()
    return f"its stderr ends: {tail[-2000:]}" if tail else "it wrote nothing to stderr"
