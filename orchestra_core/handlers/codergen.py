"""The codergen handler (Attractor 4.5): prompt, LLM backend (or simulation), prompt.md, response.md and
context.json (the context the stage saw, after fidelity projection).

The status-file contract (Appendix C) is kept by the engine for every handler: it deletes a stale
`status.json` before each attempt and, when the stage wrote one, that file decides the outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from attrs import evolve

from orchestra_core.engine.fidelity import build_preamble, history_limit, project_context, stage_history
from orchestra_core.engine.stage import StageRun
from orchestra_core.handlers.activity import ActivityFeed
from orchestra_core.handlers.interactive import BackendCall, HistoryLoader, InteractiveChat
from orchestra_core.model.activity import Activity
from orchestra_core.model.agent_resume import RESUME_NODE, clear_agent_resume
from orchestra_core.model.cancellation import takes_cancel, takes_keyword
from orchestra_core.model.chat import INTERACTIVE_MODE
from orchestra_core.model.context import Context
from orchestra_core.model.events import AgentActivity, ModelFailedOver
from orchestra_core.model.failover import ModelFailover, clear_last_attempt, set_last_attempt
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.ports.codergen_backend import CodergenBackend, OnTurn
from orchestra_core.ports.conversation import Conversation

LAST_RESPONSE_CHARS = 200
OnTurnFactory = Callable[[Node, StageRun], OnTurn | None]


def failover_keyword(backend: CodergenBackend, stage: StageRun) -> dict[str, Any]:
    """`on_failover` for a backend that takes it: each switch to a fallback model becomes the stage's
    ModelFailedOver event (recorded in the session, shown on the console)."""
    if not takes_keyword(backend.run, "on_failover"):
        return {}

    def on_failover(failover: ModelFailover) -> None:
        stage.emit(ModelFailedOver, node_id=failover.node_id, failover=failover)

    return {"on_failover": on_failover}


def activity_feed(backend: CodergenBackend, stage: StageRun, node: Node) -> ActivityFeed | None:
    """`on_activity` for a backend that takes it: what the node's agent does becomes the stage's AgentActivity
    events (text coalesced; shown live, never recorded). None for a backend that reports no activity."""
    if not takes_keyword(backend.run, "on_activity"):
        return None

    def send(activity: Activity) -> None:
        stage.emit(
            AgentActivity,
            node_id=node.id,
            activity=activity.kind,
            text=activity.text,
            tool=activity.tool,
            call_id=activity.call_id,
            error=activity.error,
            turn=activity.turn,
        )

    return ActivityFeed(send)


def expand_goal(text: str, graph: Graph) -> str:
    """Replace `$goal` with the graph's goal (the only built-in prompt variable)."""
    return text.replace("$goal", graph.goal) if "$goal" in text else text


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _context_document(fidelity: str, context: Context) -> str:
    projected = project_context(fidelity, context.snapshot())
    return json.dumps(projected, ensure_ascii=False, default=str, indent=1) + "\n"


@runtime_checkable
class PromptBuilder(Protocol):
    """Composes the prompt a codergen stage sends to its backend (the agents layer plugs in here)."""

    def build(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> str:
        """The full prompt for this stage attempt."""
        ...


class DefaultPromptBuilder:
    """The node's `prompt` (else its label) with `$goal` expanded, after the fidelity preamble for every
    mode but `full`."""

    def build(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> str:
        task = expand_goal(node.prompt or node.label, graph)
        preamble = stage_preamble(context, graph, stage)
        return f"{preamble}\n\n## Task\n{task}" if preamble else task


def stage_preamble(context: Context, graph: Graph, stage: StageRun) -> str:
    """The fidelity preamble for this stage ("" under `full` fidelity); every prompt builder adds it."""
    limit = history_limit(stage.fidelity)
    return build_preamble(
        stage.fidelity,
        goal=graph.goal,
        session_id=stage.session_id,
        history=stage_history(stage.completed_nodes, stage.node_outcomes, limit),
        context=context.snapshot(),
        total_stages=len(stage.completed_nodes),
    )


class CodergenHandler:
    """Runs an LLM task through a CodergenBackend; without a backend it simulates the response.

    Args:
        backend: The LLM backend; None means simulation (`[Simulated] Response for stage: <id>`).
        prompt_builder: Composes the prompt (default: DefaultPromptBuilder).
        on_turn_factory: Gives the per-turn callback for a stage (the workspace layer commits there).
        conversation: The human side of interactive nodes (None: they run autonomously).
        mode_for: A node's agent mode (`autonomous` or `interactive`; None: every node is autonomous).
        chat_history: The conversation an interrupted run left in a node (session id, node id), for resume.
    """

    def __init__(
        self,
        backend: CodergenBackend | None = None,
        *,
        prompt_builder: PromptBuilder | None = None,
        on_turn_factory: OnTurnFactory | None = None,
        conversation: Conversation | None = None,
        mode_for: Callable[[Node], str] | None = None,
        chat_history: HistoryLoader | None = None,
    ) -> None:
        self.backend = backend
        self.prompt_builder = prompt_builder or DefaultPromptBuilder()
        self.on_turn_factory = on_turn_factory
        self.conversation = conversation
        self.mode_for = mode_for
        self.chat_history = chat_history

    def _interactive(self, node: Node) -> bool:
        return self.mode_for is not None and self.mode_for(node) == INTERACTIVE_MODE

    def _caller(self, stage: StageRun) -> BackendCall:
        """One backend call, with the stage's cancel and its failover events; the node's resume point is spent by
        it, and the backend is told whether this is the node's last attempt (model/failover.py)."""
        backend = self.backend
        assert backend is not None
        extra: dict[str, Any] = {"cancel": stage.cancel} if takes_cancel(backend.run) else {}
        extra.update(failover_keyword(backend, stage))

        def call(node: Node, prompt: str, context: Context, on_turn: OnTurn | None) -> str | Outcome:
            set_last_attempt(context, stage.attempt >= stage.max_attempts)
            feed = activity_feed(backend, stage, node)
            try:
                activity: dict[str, Any] = {"on_activity": feed} if feed is not None else {}
                return backend.run(node, prompt, context, on_turn=on_turn, **extra, **activity)
            finally:  # a resume point is for one backend call of its node (see model/agent_resume.py)
                if feed is not None:
                    feed.close()
                clear_last_attempt(context)
                if context.get(RESUME_NODE) == node.id:
                    clear_agent_resume(context)

        return call

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        prompt = self.prompt_builder.build(node, context, graph, stage)
        stage.write("prompt.md", prompt)
        stage.write("context.json", _context_document(stage.fidelity, context))
        if self.backend is None:
            if context.get(RESUME_NODE) == node.id:  # a resume point is for one call: simulation spends it too
                clear_agent_resume(context)
            result: str | Outcome = f"[Simulated] Response for stage: {node.id}"
        else:
            on_turn = self.on_turn_factory(node, stage) if self.on_turn_factory else None
            call = self._caller(stage)
            conversation = self.conversation if self.conversation is not None and self._interactive(node) else None
            if conversation is not None:
                result = InteractiveChat(call, conversation, self.chat_history).run(node, prompt, context, stage, on_turn)
            else:
                result = call(node, prompt, context, on_turn)
        if isinstance(result, Outcome):
            stage.write("response.md", result.notes or result.failure_reason or f"[{result.status.value}]")
            return evolve(result, context_updates={"last_stage": node.id, **result.context_updates})
        text = str(result)
        stage.write("response.md", text)
        return Outcome.success(
            f"Stage completed: {node.id}",
            context_updates={"last_stage": node.id, "last_response": truncate(text, LAST_RESPONSE_CHARS)},
        )
