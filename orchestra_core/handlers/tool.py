"""The tool handler (Attractor 4.10): run the node's `tool_command` through the CommandRunner port.

The command text comes from the pipeline only; nothing from the context or an LLM is ever put into it.
Stages get what they need through the environment: ORCHESTRA_LOGS_ROOT, ORCHESTRA_STAGE_DIR,
ORCHESTRA_NODE_ID, ORCHESTRA_PROMPT_FILE, ORCHESTRA_SESSION_ID, ORCHESTRA_ATTEMPT and the ATTRACTOR_*
twins of the first four. Node attributes: `tool_command`, `tool_workdir` (relative to the working
directory the handler was given, the project root by default), `timeout`, `prompt` (written to
`prompt.txt`), `auto_status` (a command that ends without writing status.json succeeds whatever its exit code,
with the note "auto_status synthesized success (exit code N)"; a timeout or cancellation still fails),
`tool_hooks.pre` / `tool_hooks.post` (the graph's by default; run around the command with TOOL_NAME=shell: a
failing pre-hook fails the node without running the command, a failing post-hook is recorded only).
With workspace repos, what the command (and its hooks) changed is committed as a turn of the stage, whatever its
exit code (the run's `ToolTurns`, docs/git.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from attrs import evolve

from orchestra_core.engine.execution import auto_status_outcome
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.codergen import expand_goal
from orchestra_core.handlers.hook_commands import HookResult, HookTarget, run_hook
from orchestra_core.model.cancellation import takes_cancel
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.values import format_duration
from orchestra_core.ports.command_runner import CommandResult, CommandRunner

CONTEXT_OUTPUT_CHARS = 64 * 1024
SHELL_TOOL = "shell"  # TOOL_NAME of a tool node's command in its hooks, as other Attractor runners call it
STDERR_TAIL_CHARS = 2000


ToolTurnEnd = Callable[[CommandResult], None]
"""Called with the command's result once the command and its post-hook ended: commits and records what changed."""


class ToolTurns(Protocol):
    """What the run does around a tool stage: watch the worktrees it may write before its command runs; the
    returned function commits and records what changed as a turn of the stage (the workspace layer's)."""

    def __call__(self, node: Node, stage: StageRun, command: str) -> ToolTurnEnd: ...


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
        turns: Commits what each command changed as a turn of its stage (None: nothing is committed).
    """

    enforces_timeout = True

    def __init__(
        self,
        runner: CommandRunner | None,
        workdir: str | Callable[[str | None], str] = ".",
        turns: ToolTurns | None = None,
    ) -> None:
        self.runner = runner
        self.workdir = workdir
        self.turns = turns

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
        hooks = _NodeHooks(self.runner, node, graph, stage, context, cwd=cwd, env=env, command=command)
        vetoed = hooks.before()
        if vetoed is not None:
            stage.write("tool_output.txt", f"$ {command}\n# not run: the tool_hooks.pre hook failed\n{vetoed.render()}")
            return Outcome.fail(f"{vetoed.failure()}; the command did not run", context_updates={"last_stage": node.id})
        end = self.turns(node, stage, command) if self.turns is not None else None  # before the command runs
        # The stage directory is where a command may write status.json; the run adds its worktrees.
        extra: dict[str, Any] = {"cancel": stage.cancel} if takes_cancel(self.runner.run) else {}
        result = self.runner.run(
            command, cwd=cwd, env=env, timeout=stage.timeout, writable=(stage.stage_dir,), **extra
        )
        after = hooks.after(result)
        stage.write("tool_output.txt", render_output(command, result) + "".join(hook.render() for hook in hooks.ran))
        if end is not None:
            end(result)
        outcome = _outcome(node, stage, command, result)
        if after is None or after.ok:
            return outcome
        noted = f"{outcome.notes}; " if outcome.notes else ""
        return evolve(outcome, notes=f"{noted}{after.failure()} (recorded; the outcome stands)")


class _NodeHooks:
    """A tool node's `tool_hooks.pre` / `.post` (the node's, else the graph's) around its command."""

    def __init__(
        self,
        runner: CommandRunner,
        node: Node,
        graph: Graph,
        stage: StageRun,
        context: Context,
        *,
        cwd: str,
        env: dict[str, str],
        command: str,
    ) -> None:
        self.pre, self.post = graph.tool_hooks_for(node)
        self.runner = runner
        self.stage = stage
        self.context = context
        self.target = HookTarget(node.id, SHELL_TOOL, SHELL_TOOL, stage.stage_dir, stage.logs_root)
        self.cwd = cwd
        self.env = env
        self.payload: dict[str, Any] = {"arguments": {"command": command}}
        self.ran: list[HookResult] = []

    def before(self) -> HookResult | None:
        """Run the pre-hook; the result when it blocks the command."""
        if not self.pre:
            return None
        result = self._run("pre", self.pre, self.payload)
        return result if result.vetoed else None

    def after(self, command: CommandResult) -> HookResult | None:
        """Run the post-hook with the command's exit code; its result (None without a post-hook)."""
        if not self.post:
            return None
        payload = {**self.payload, "exit_code": command.exit_code}
        return self._run("post", self.post, payload, command.exit_code)

    def _run(self, phase: str, hook: str, payload: dict[str, Any], exit_code: int | None = None) -> HookResult:
        result = run_hook(
            self.runner, phase, hook, self.target, cwd=self.cwd, payload=payload, exit_code=exit_code, env=self.env,
            cancel=self.stage.cancel,
        )
        self.ran.append(result)
        self.context.append_log(f"tool hook {result.summary()}")
        return result


def _outcome(node: Node, stage: StageRun, command: str, result: CommandResult) -> Outcome:
    """What the command's end amounts to (a status.json it wrote overrides this in the engine)."""
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
