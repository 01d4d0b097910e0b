"""The tool handler (Attractor 4.10): run the node's `tool_command` through the CommandRunner port.

The command text comes from the pipeline only; nothing from the context or an LLM is ever put into it.
Stages get what they need through the environment: ORCHESTRA_LOGS_ROOT, ORCHESTRA_STAGE_DIR,
ORCHESTRA_NODE_ID, ORCHESTRA_PROMPT_FILE, ORCHESTRA_SESSION_ID, ORCHESTRA_ATTEMPT and the ATTRACTOR_*
twins of the first four. Node attributes: `tool_command`, `tool_workdir` (relative to the working
directory the handler was given, the project root by default), `timeout`, `prompt` (written to
`prompt.txt`), `auto_status` (a command that ends without writing status.json succeeds whatever its exit code,
with the note "auto_status synthesized success (exit code N)"; a timeout or cancellation still fails).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from orchestra_core.engine.execution import auto_status_outcome
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.codergen import expand_goal
from orchestra_core.model.cancellation import takes_cancel
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.values import format_duration
from orchestra_core.ports.command_runner import CommandResult, CommandRunner

CONTEXT_OUTPUT_CHARS = 64 * 1024
STDERR_TAIL_CHARS = 2000


def tool_environment(node: Node, stage: StageRun, prompt_file: str) -> dict[str, str]:
    """The variables a tool command runs with (added to the inherited environment)."""
    env = {
        "ORCHESTRA_LOGS_ROOT": stage.logs_root,
        "ORCHESTRA_STAGE_DIR": stage.stage_dir,
        "ORCHESTRA_NODE_ID": node.id,
        "ORCHESTRA_PROMPT_FILE": prompt_file,
        "ORCHESTRA_SESSION_ID": stage.session_id,
        "ORCHESTRA_ATTEMPT": str(stage.attempt),
    }
    for name in ("LOGS_ROOT", "STAGE_DIR", "NODE_ID", "PROMPT_FILE"):
        env[f"ATTRACTOR_{name}"] = env[f"ORCHESTRA_{name}"]
    return env


def tail(text: str, limit: int) -> str:
    """The end of a text, marked when cut."""
    return text if len(text) <= limit else f"[... {len(text) - limit} characters cut]\n" + text[-limit:]


def render_output(command: str, result: CommandResult) -> str:
    """The `tool_output.txt` document."""
    status = "timed out" if result.timed_out else "cancelled" if result.cancelled else f"exit code {result.exit_code}"
    return (
        f"$ {command}\n# {status} after {result.duration_s:.3f}s\n"
        f"--- stdout ---\n{result.stdout}"
        f"{'' if result.stdout.endswith(chr(10)) or not result.stdout else chr(10)}"
        f"--- stderr ---\n{result.stderr}"
    )


class ToolHandler:
    """Runs shell commands; a non-zero exit code is a FAIL with the code and the tail of stderr.

    Args:
        runner: Runs the command (its own process group, killed whole on timeout).
        workdir: The default working directory (the project root), or a function giving it for the node's
            parallel branch (None on the main line): a branch with its own worktree runs there.
    """

    enforces_timeout = True

    def __init__(self, runner: CommandRunner | None, workdir: str | Callable[[str | None], str] = ".") -> None:
        self.runner = runner
        self.workdir = workdir

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        command = node.get("tool_command").strip()
        if not command:
            return Outcome.fail("No tool_command specified")
        if self.runner is None:
            return Outcome.fail("no command runner is configured for tool nodes")
        stage.write("prompt.txt", expand_goal(node.prompt, graph))
        prompt_file = os.path.join(stage.stage_dir, "prompt.txt")
        base = self.workdir(stage.branch) if callable(self.workdir) else self.workdir
        cwd = os.path.join(base, node.get("tool_workdir")) if node.get("tool_workdir") else base
        env = tool_environment(node, stage, prompt_file)
        # The stage directory is where a command may write status.json; the run adds its worktrees.
        extra: dict[str, Any] = {"cancel": stage.cancel} if takes_cancel(self.runner.run) else {}
        result = self.runner.run(
            command, cwd=cwd, env=env, timeout=stage.timeout, writable=(stage.stage_dir,), **extra
        )
        stage.write("tool_output.txt", render_output(command, result))
        updates = {
            "tool.output": tail(result.stdout.rstrip("\n"), CONTEXT_OUTPUT_CHARS),
            "tool.exit_code": result.exit_code,
            "last_stage": node.id,
        }
        if result.cancelled:
            return Outcome.fail(f"{stage.cancel.reason}; the command's processes were killed", context_updates=updates)
        if result.timed_out:
            timeout = format_duration(stage.timeout or result.duration_s)
            return Outcome.fail(f"timed out after {timeout}; the command's processes were killed", context_updates=updates)
        if node.auto_status:  # the command's status.json, if it wrote one, still decides (the engine reads it)
            return auto_status_outcome(f"exit code {result.exit_code}", updates)
        if result.exit_code != 0:
            detail = tail((result.stderr or result.stdout).strip(), STDERR_TAIL_CHARS)
            reason = f"exit code {result.exit_code}" + (f": {detail}" if detail else "")
            return Outcome.fail(reason, context_updates=updates)
        return Outcome.success(f"Tool completed: {command}", context_updates=updates)
