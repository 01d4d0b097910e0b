"""Tool call hooks (Attractor 9.7): shell commands run before and after each agent tool call.

A pre-hook that exits non-zero (or times out) vetoes the call and the model is told it was blocked;
a post-hook sees the result and cannot change it. Both are recorded as HookResults. Running one hook (its
environment, stdin and record) is shared with tool nodes: `orchestra_core.handlers.hook_commands`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import evolve

from orchestra_core.agents.tools import AgentTool, ToolFailure, is_tool_error
from orchestra_core.handlers.hook_commands import (
    DEFAULT_HOOK_TIMEOUT_S,
    HookResult,
    HookTarget,
    run_hook,
)
from orchestra_core.model.graph import Graph, Node
from orchestra_core.ports.command_runner import CommandRunner

__all__ = ["DEFAULT_HOOK_TIMEOUT_S", "HookResult", "ToolHooks"]


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
        stage_dir: str = "",
        logs_root: str = "",
        timeout: float = DEFAULT_HOOK_TIMEOUT_S,
        on_result: Callable[[HookResult], None] | None = None,
    ) -> None:
        self._runner = runner
        self.pre = pre.strip()
        self.post = post.strip()
        self._cwd = cwd
        self._node_id = node_id
        self._stage_dir = stage_dir
        self._logs_root = logs_root
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
        stage_dir: str = "",
        logs_root: str = "",
        on_result: Callable[[HookResult], None] | None = None,
    ) -> ToolHooks:
        """The node's hooks: its own `tool_hooks.pre`/`.post` attributes, else the graph's."""
        pre, post = graph.tool_hooks_for(node)
        return cls(
            runner, pre=pre, post=post, cwd=cwd, node_id=node.id, stage_dir=stage_dir, logs_root=logs_root,
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
            payload: dict[str, Any] = {"arguments": arguments}
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
                failed = is_tool_error(result)
                self._run("post", tool, {**payload, "result": str(result), "is_error": failed}, exit_code=int(failed))
            return result

        return call

    def _run(self, phase: str, tool: AgentTool, payload: Mapping[str, Any], exit_code: int | None = None) -> HookResult:
        target = HookTarget(self._node_id, tool.name, tool.safe_name, self._stage_dir, self._logs_root)
        command = self.pre if phase == "pre" else self.post
        result = run_hook(
            self._runner, phase, command, target, cwd=self._cwd, payload=payload, exit_code=exit_code,
            timeout=self._timeout,
        )
        with self._lock:
            self._results.append(result)
        if self._on_result is not None:
            self._on_result(result)
        return result
