"""Interactive mode for codergen nodes (`agent.mode="interactive"`, seed 003): a conversation inside the node.

The agent runs; its reply goes to the human (a Conversation); the human's message goes back to the agent,
until the human ends it: `/done` keeps the agent's last outcome, `/approve` succeeds, `/reject` fails. Each
human message is recorded as an interview (a `HumanInteraction` turn in interactive mode) before the agent
sees it, so an interrupted run resumes the conversation where it was (`ChatHistory`). A backend with
resumable agent state (LangGraph, Claude Code's session) continues its own conversation from the last agent
turn; any other backend, or one whose state is lost (`AgentStateLost`, with a warning), gets the
conversation so far written into its prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orchestra_core.engine.stage import StageRun
from orchestra_core.model.agent_resume import AgentResume, AgentStateLost
from orchestra_core.model.chat import (
    ANSWERED,
    APPROVE,
    CONTINUE,
    DONE,
    INTERACTIVE_MODE,
    REJECT,
    SEND,
    ChatHistory,
    ChatTurn,
    Exchange,
    end_command,
)
from orchestra_core.model.context import Context
from orchestra_core.model.events import InterviewCompleted, InterviewStarted, StageWarning
from orchestra_core.model.graph import Node
from orchestra_core.model.interview import Answer, Question, QuestionType
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.codergen_backend import OnTurn
from orchestra_core.ports.conversation import Conversation

# (node, prompt, context, on_turn) -> the backend's result; the handler's call with cancel and resume cleanup.
BackendCall = Callable[[Node, str, Context, OnTurn | None], "str | Outcome"]
HistoryLoader = Callable[[str, str], ChatHistory]


def reply_text(result: str | Outcome) -> str:
    """What the human is shown of a backend result."""
    if isinstance(result, Outcome):
        return result.notes or result.failure_reason or f"[{result.status.value}]"
    return str(result)


def transcript_prompt(prompt: str, exchanges: tuple[Exchange, ...] | list[Exchange]) -> str:
    """The task with the conversation so far, for a backend that keeps no conversation of its own."""
    lines = [prompt, "", "## Conversation with the human so far"]
    for agent, human in exchanges:
        lines += ["", "### You", agent, "", "### Human", human]
    lines += ["", "Answer the human's latest message."]
    return "\n".join(lines)


class InteractiveChat:
    """Runs one interactive node: agent and human take turns until the human ends the conversation.

    Args:
        call: Calls the node's backend.
        conversation: The human side.
        history: The conversation an interrupted run left in (session id, node id); None: always fresh.
    """

    def __init__(
        self, call: BackendCall, conversation: Conversation, history: HistoryLoader | None = None
    ) -> None:
        self._call = call
        self._conversation = conversation
        self._history = history

    def run(
        self, node: Node, prompt: str, context: Context, stage: StageRun, on_turn: OnTurn | None
    ) -> str | Outcome:
        """The node's result once the human ends the conversation."""
        restored = self._history(stage.session_id, node.id) if self._history is not None else ChatHistory()
        exchanges = list(restored.exchanges)
        last: list[tuple[int, str | None]] = [(restored.turn_number, restored.agent_state_ref)]

        def track(turn: AgentTurn) -> None:
            last[0] = (turn.turn_number, turn.agent_state_ref)
            if on_turn is not None:
                on_turn(turn)

        def replay() -> str | Outcome:
            text = transcript_prompt(prompt, exchanges) if exchanges else prompt
            return self._call(node, text, context, track)

        def agent(message: str) -> str | Outcome:
            number, state = last[0]
            if state is None:  # no agent state to continue: the conversation goes into the prompt
                return replay()
            context.apply_updates(AgentResume(node.id, number, state, message).context_values())
            try:
                return self._call(node, message or prompt, context, track)
            except AgentStateLost as lost:
                if lost.warn:
                    stage.emit(
                        StageWarning,
                        node_id=node.id,
                        message=f"{lost}; the conversation so far is replayed in a new prompt",
                    )
                return replay()

        if restored.next_step == ANSWERED:
            result: str | Outcome = restored.agent_message
        elif restored.next_step in (SEND, CONTINUE):
            result = agent(exchanges[-1][1] if restored.next_step == SEND and exchanges else "")
        else:
            result = self._call(node, prompt, context, track)
        while True:
            shown = reply_text(result)
            message = self._ask(node, shown, exchanges, stage)
            exchanges.append((shown, message))
            command = end_command(message)
            if command == DONE:
                return result
            if command == APPROVE:
                return Outcome(StageStatus.SUCCESS, notes=f"approved by the human: {node.id}")
            if command == REJECT:
                return Outcome.fail(f"the human rejected the work of {node.id}")
            result = agent(message)

    def _ask(self, node: Node, shown: str, exchanges: list[Exchange], stage: StageRun) -> str:
        """The human's next message, recorded as an interactive interview turn."""
        question = Question(
            text=shown, type=QuestionType.FREEFORM, stage=node.id, metadata={"mode": INTERACTIVE_MODE}
        )
        stage.emit(InterviewStarted, question=question, stage=node.id)
        clock = stage.engine.clock
        started = clock.monotonic()
        message = self._conversation.reply(ChatTurn(node.id, shown, exchanges)).strip() or DONE
        answer = Answer(message, text=message)
        stage.emit(
            InterviewCompleted, question=question, answer=answer, duration_s=clock.monotonic() - started
        )
        return message


def conversation_of(interviewer: Any) -> Conversation | None:
    """The interviewer as a Conversation, when it holds conversations (auto-approve does not)."""
    return interviewer if isinstance(interviewer, Conversation) else None
