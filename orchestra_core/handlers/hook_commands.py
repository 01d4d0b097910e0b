"""Tool hooks (Attractor 9.7): one `tool_hooks.pre` / `tool_hooks.post` command run around a tool, recorded.

Shared by tool nodes (the tool is their shell command, `TOOL_NAME=shell`) and agents (each tool call). A hook
gets `TOOL_NAME`, `NODE_ID`, `EXIT_CODE` (post only), `ATTRACTOR_STAGE_DIR`, `ATTRACTOR_LOGS_ROOT`,
`ATTRACTOR_NODE_ID` as other Attractor runners name them, their `ORCHESTRA_*` twins, `ORCHESTRA_HOOK_PHASE`,
and a JSON object on stdin.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from orchestra_core.model.cancellation import Cancellation, takes_cancel
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

    def failure(self) -> str:
        """Why a failed hook failed, for an outcome's reason or notes."""
        status = "timed out" if self.timed_out else f"exit code {self.exit_code}"
        reason = self.reason()
        return f"the tool_hooks.{self.phase} hook failed ({status}{': ' + reason if reason else ''})"

    def reason(self) -> str:
        """The hook's last line of output (stderr first), to say why."""
        for text in (self.stderr, self.stdout):
            lines = [line for line in text.strip().splitlines() if line.strip()]
            if lines:
                return lines[-1].strip()
        return ""

    def render(self) -> str:
        """The hook's section of a stage's `tool_output.txt`."""
        return f"--- {self.summary()} ---\n$ {self.command}\n{self.stdout}{self.stderr}"


@frozen
class HookTarget:
    """What a hook runs around: a node's tool, and where the node's stage writes."""

    node_id: str
    tool: str  # "shell" for a tool node's command; the agent tool's name
    safe_name: str = ""
    stage_dir: str = ""
    logs_root: str = ""


def hook_environment(phase: str, target: HookTarget, exit_code: int | None = None) -> dict[str, str]:
    """The variables a hook runs with (added to the inherited environment)."""
    env = {
        "TOOL_NAME": target.tool,
        "NODE_ID": target.node_id,
        "ORCHESTRA_HOOK_PHASE": phase,
        "ORCHESTRA_TOOL_NAME": target.tool,
        "ORCHESTRA_TOOL_SAFE_NAME": target.safe_name or target.tool,
        "ORCHESTRA_NODE_ID": target.node_id,
        "ATTRACTOR_NODE_ID": target.node_id,
    }
    if target.stage_dir:
        env["ORCHESTRA_STAGE_DIR"] = env["ATTRACTOR_STAGE_DIR"] = target.stage_dir
    if target.logs_root:
        env["ORCHESTRA_LOGS_ROOT"] = env["ATTRACTOR_LOGS_ROOT"] = target.logs_root
    if phase == "post":
        env["ORCHESTRA_EXIT_CODE"] = env["EXIT_CODE"] = "" if exit_code is None else str(exit_code)
    return env


def run_hook(
    runner: CommandRunner,
    phase: str,
    command: str,
    target: HookTarget,
    *,
    cwd: str,
    payload: Mapping[str, Any],
    exit_code: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_HOOK_TIMEOUT_S,
    cancel: Cancellation | None = None,
) -> HookResult:
    """Run one hook in `cwd` (the stage directory writable); a hook that cannot start counts as failing.

    Args:
        payload: The stdin JSON besides `phase`, `node_id` and `tool`.
        exit_code: The tool's exit code, for a post-hook (`EXIT_CODE`).
        env: More variables (a tool node's own), under the hook's.
    """
    variables = {**(env or {}), **hook_environment(phase, target, exit_code)}
    stdin = json.dumps({"phase": phase, "node_id": target.node_id, "tool": target.tool, **payload}, default=str)
    writable: Sequence[str] = (target.stage_dir,) if target.stage_dir else ()
    extra: dict[str, Any] = {"cancel": cancel} if cancel is not None and takes_cancel(runner.run) else {}
    try:
        outcome = runner.run(command, cwd=cwd, env=variables, timeout=timeout, stdin=stdin, writable=writable, **extra)
    except OSError as error:
        outcome = CommandResult(exit_code=None, stdout="", stderr=f"cannot run hook: {error}", duration_s=0.0)
    return HookResult(
        phase=phase,
        node_id=target.node_id,
        tool=target.tool,
        command=command,
        exit_code=outcome.exit_code,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        duration_s=outcome.duration_s,
        timed_out=outcome.timed_out or outcome.cancelled,
    )
