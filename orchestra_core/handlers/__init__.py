"""Node handlers (Attractor section 4) and the registry that picks one per node."""

from __future__ import annotations

from collections.abc import Callable

from orchestra_core.handlers.basic import ConditionalHandler, ExitHandler, StartHandler
from orchestra_core.handlers.codergen import (
    CodergenHandler,
    DefaultPromptBuilder,
    OnTurnFactory,
    PromptBuilder,
)
from orchestra_core.handlers.fan_in import FanInHandler
from orchestra_core.handlers.human import WaitForHumanHandler
from orchestra_core.handlers.interactive import HistoryLoader, conversation_of
from orchestra_core.handlers.manager import ManagerLoopHandler, PipelineLoader
from orchestra_core.handlers.parallel import ParallelHandler
from orchestra_core.handlers.registry import HandlerRegistry
from orchestra_core.handlers.tool import ToolHandler, ToolTurns
from orchestra_core.model.graph import Node
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.ports.interviewer import Interviewer

BUILT_IN_TYPES = (
    "start",
    "exit",
    "codergen",
    "wait.human",
    "conditional",
    "parallel",
    "parallel.fan_in",
    "tool",
    "stack.manager_loop",
)


def build_registry(
    *,
    backend: CodergenBackend | None = None,
    interviewer: Interviewer | None = None,
    command_runner: CommandRunner | None = None,
    workdir: str | Callable[[str | None], str] = ".",
    prompt_builder: PromptBuilder | None = None,
    on_turn_factory: OnTurnFactory | None = None,
    pipeline_loader: PipelineLoader | None = None,
    mode_for: Callable[[Node], str] | None = None,
    chat_history: HistoryLoader | None = None,
    tool_turns: ToolTurns | None = None,
) -> HandlerRegistry:
    """A registry with every built-in handler; register custom types on it afterwards.

    Args:
        backend: The LLM backend for codergen and fan-in ranking (None: simulation).
        interviewer: Answers human gates (None: gates fail, saying none is configured).
        command_runner: Runs tool commands (None: tool nodes fail, saying none is configured).
        workdir: Where tool commands run (the project root), or a function of the parallel branch giving it.
        prompt_builder: Composes codergen prompts (default: goal expansion plus fidelity preamble).
        on_turn_factory: Per-stage agent-turn callback for codergen (the workspace layer).
        pipeline_loader: Loads child pipelines of manager loops.
        mode_for: A codergen node's agent mode; interactive nodes converse through the interviewer when it
            holds conversations (handlers/interactive.py).
        chat_history: The conversation an interrupted run left in an interactive node, for resume.
        tool_turns: Commits what each tool stage changed as a turn of the stage (the workspace layer).
    """
    codergen = CodergenHandler(
        backend, prompt_builder=prompt_builder, on_turn_factory=on_turn_factory,
        conversation=conversation_of(interviewer), mode_for=mode_for, chat_history=chat_history,
    )
    registry = HandlerRegistry(codergen)
    registry.register("start", StartHandler())
    registry.register("exit", ExitHandler())
    registry.register("codergen", codergen)
    registry.register("wait.human", WaitForHumanHandler(interviewer))
    registry.register("conditional", ConditionalHandler())
    registry.register("parallel", ParallelHandler())
    registry.register("parallel.fan_in", FanInHandler(backend))
    registry.register("tool", ToolHandler(command_runner, workdir, tool_turns))
    registry.register("stack.manager_loop", ManagerLoopHandler(pipeline_loader))
    return registry


__all__ = [
    "BUILT_IN_TYPES",
    "CodergenHandler",
    "ConditionalHandler",
    "DefaultPromptBuilder",
    "ExitHandler",
    "FanInHandler",
    "HandlerRegistry",
    "ManagerLoopHandler",
    "OnTurnFactory",
    "ParallelHandler",
    "PromptBuilder",
    "StartHandler",
    "ToolHandler",
    "ToolTurns",
    "WaitForHumanHandler",
    "build_registry",
]
