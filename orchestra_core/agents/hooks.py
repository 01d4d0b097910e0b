"""Tool call hooks (Attractor 9.7): shell commands run before and after each agent tool call.

A pre-hook that exits non-zero (or times out) vetoes the call and the model is told it was blocked;
a post-hook sees the result and cannot change it. Both are recorded as HookResults.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import evolve, frozen

from orchestra_core.agents.tools import AgentTool, ToolFailure, is_tool_error
from orchestra_core.model.graph import Graph, Node
from orchestra_core.ports.command_runner import CommandResult, CommandRunner

DEFAULT_HOOK_TIMEOUT_S = 60.0


@frozen
class HookResult:
    """One hook run."""

    phase: str  # "pre" or "post"
    node_id: str
    tool: str
    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def vetoed(self) -> bool:
        """A pre-hook that did not succeed blocks the tool call."""
        return self.phase == "pre" and not self.ok

    def summary(self) -> str:
        """One line for the stage log."""
        status = "timed out" if self.timed_out else f"exit {self.exit_code}"
        verdict = " (call blocked)" if self.vetoed else ""
        return f"tool_hooks.{self.phase} for {self.tool} on node {self.node_id}: {status}{verdict}"

    def reason(self) -> str:
        """The hook's last line of output (stderr first), to tell the model why."""
        for text in (self.stderr, self.stdout):
            lines = [line for line in text.strip().splitlines() if line.strip()]
            if lines:
                return lines[-1].strip()
        return ""


class ToolHooks:
    """Wraps AgentTools so the node's pre and post hooks run around every call."""

    def __init__(
        self,
        runner: CommandRunner,
        *,
        pre: str = "",
        post: str = "",
        cwd: str,
        node_id: str = "",
        timeout: float = DEFAULT_HOOK_TIMEOUT_S,
        on_result: Callable[[HookResult], None] | None = None,
    ) -> None:
        self._runner = runner
        self.pre = pre.strip()
        self.post = post.strip()
        self._cwd = cwd
        self._node_id = node_id
        self._timeout = timeout
        self._on_result = on_result
        self._results: list[HookResult] = []
        self._lock = threading.Lock()

    @classmethod
    def for_node(
        cls,
        node: Node,
        graph: Graph,
        runner: CommandRunner,
        *,
        cwd: str,
        on_result: Callable[[HookResult], None] | None = None,
    ) -> ToolHooks:
        """The node's hooks: its own `tool_hooks.pre`/`.post` attributes, else the graph's."""
        return cls(
            runner,
            pre=node.attrs.get("tool_hooks.pre") or graph.tool_hooks_pre,
            post=node.attrs.get("tool_hooks.post") or graph.tool_hooks_post,
            cwd=cwd,
            node_id=node.id,
            on_result=on_result,
        )

    @property
    def active(self) -> bool:
        return bool(self.pre or self.post)

    def wrap(self, tools: Sequence[AgentTool]) -> list[AgentTool]:
        """The same tools, each running the hooks around its calls (unchanged when there are no hooks)."""
        if not self.active:
            return list(tools)
        return [evolve(tool, func=self._hooked(tool)) for tool in tools]

    def drain(self) -> list[HookResult]:
        """The hook results since the last drain (e.g. one agent turn's), oldest first."""
        with self._lock:
            results, self._results = self._results, []
            return results

    def _hooked(self, tool: AgentTool) -> Callable[..., str]:
        def call(**arguments: Any) -> str:
            payload: dict[str, Any] = {"node_id": self._node_id, "tool": tool.name, "arguments": arguments}
            if self.pre:
                verdict = self._run("pre", tool, payload)
                if verdict.vetoed:
                    reason = verdict.reason()
                    return ToolFailure.of(
                        f"the call to {tool.name} was blocked by the tool_hooks.pre hook"
                        + (f": {reason}" if reason else "")
                    )
            result = tool.func(**arguments)
            if self.post:
                self._run("post", tool, {**payload, "result": str(result), "is_error": is_tool_error(result)})
            return result

        return call

    def _run(self, phase: str, tool: AgentTool, payload: Mapping[str, Any]) -> HookResult:
        command = self.pre if phase == "pre" else self.post
        env = {
            "ORCHESTRA_HOOK_PHASE": phase,
            "ORCHESTRA_NODE_ID": self._node_id,
            "ORCHESTRA_TOOL_NAME": tool.name,
            "ORCHESTRA_TOOL_SAFE_NAME": tool.safe_name,
        }
        stdin = json.dumps({"phase": phase, **payload}, default=str)
        try:
            outcome = self._runner.run(command, cwd=self._cwd, env=env, timeout=self._timeout, stdin=stdin)
        except OSError as error:  # the hook could not even start: treated like a failing hook
            outcome = CommandResult(exit_code=None, stdout="", stderr=f"cannot run hook: {error}", duration_s=0.0)
        result = _result(phase, self._node_id, tool.name, command, outcome)
        with self._lock:
            self._results.append(result)
        if self._on_result is not None:
            self._on_result(result)
        return result


def _result(phase: str, node_id: str, tool: str, command: str, outcome: CommandResult) -> HookResult:
    return HookResult(
        phase=phase,
        node_id=node_id,
        tool=tool,
        command=command,
        exit_code=outcome.exit_code,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        duration_s=outcome.duration_s,
        timed_out=outcome.timed_out,
    )
