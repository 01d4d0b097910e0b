"""LangGraphBackend: a tool-using agent loop per codergen node, one AgentTurn per model call plus its tools."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

from attrs import define, evolve, field
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from orchestra_adapters.backends.agent_graph import MODEL_NODE, TOOLS_NODE, ModelCallError, build_agent_graph
from orchestra_adapters.backends.agent_inputs import (
    AgentModelChoice,
    AgentResolver,
    AgentToolset,
    ToolHooksFor,
    model_name_of,
    requested_model,
)
from orchestra_adapters.backends.model_errors import model_failure
from orchestra_adapters.backends.turn_records import (
    AgentStateRef,
    content_text,
    message_record,
    tool_call_records,
    unanswered_tool_calls,
)
from orchestra_adapters.backends.usage import NodeUsage, UsageLedger
from orchestra_adapters.llm.failover import answering_model, prepare_failover
from orchestra_adapters.llm.replies import token_usage
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.tools import AgentTool, WriteTracker
from orchestra_core.model.activity import Activity, OnActivity
from orchestra_core.model.agent_resume import AgentResume, agent_resume_for
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.chat_models import ChatModelFactory
from orchestra_core.ports.codergen_backend import OnFailover, OnTurn

DEFAULT_MAX_TURNS = 100
MAX_TURNS_ATTR = "agent.max_turns"


class LangGraphBackend:
    """Runs each codergen node as a LangGraph agent loop with the node's tools.

    A turn is one model call plus the execution of the tool calls it made; `on_turn` receives an AgentTurn
    after every turn, once the turn's LangGraph checkpoint is saved (its `agent_state_ref`). Agent state is
    kept by LangGraph's SQLite checkpoint saver in `state_path`. With fidelity `full` the nodes sharing a
    thread key continue one conversation; other fidelities start a fresh thread per execution. When
    `tool_hooks` is given, every tool runs inside the node's pre/post hooks (a failing pre-hook blocks it).
    A resume point in the context for the node (`resume --turn`, model/agent_resume.py) continues the saved
    thread from that turn's checkpoint instead, numbering turns on from it.
    """

    name = "langgraph"

    def __init__(
        self,
        chat_models: ChatModelFactory,
        resolver: AgentResolver,
        toolset: AgentToolset,
        state_path: Path,
        *,
        tool_hooks: ToolHooksFor | None = None,
        default_max_turns: int = DEFAULT_MAX_TURNS,
    ) -> None:
        self.usage = UsageLedger()
        self._chat_models = chat_models
        self._resolver = resolver
        self._toolset = toolset
        self._tool_hooks = tool_hooks
        self._state_path = Path(state_path)
        self._default_max_turns = default_max_turns
        self._fallback_session = uuid.uuid4().hex[:12]
        self._connection: sqlite3.Connection | None = None
        self._saver: SqliteSaver | None = None
        self._lock = threading.Lock()
        self._thread_locks: dict[str, threading.Lock] = {}

    def run(
        self,
        node: Node,
        prompt: str,
        context: Context,
        on_turn: OnTurn | None = None,
        *,
        cancel: Cancellation | None = None,
        on_failover: OnFailover | None = None,
        on_activity: OnActivity | None = None,
    ) -> str | Outcome:
        """Run the node's agent until it answers without tool calls, reports an outcome or runs out of turns.
        Once `cancel` is set no model or tool call starts, and a command a tool runs is killed. With fallbacks,
        a model that cannot answer gives way to the next one mid-conversation (`on_failover` hears of it).
        `on_activity` hears each reply's text as it comes and each tool call before and after it runs."""
        max_turns = node.get_int(MAX_TURNS_ATTR, self._default_max_turns)
        if max_turns < 1:
            return Outcome.fail(f"node {node.id}: {MAX_TURNS_ATTR} must be at least 1, not {max_turns}")
        agent = self._resolver.resolve(node, context)
        tracker = WriteTracker()
        toolbox = Toolbox(self._tools(node, agent, context, tracker))
        model = self._chat_models.create(agent.provider, requested_model(agent), purpose="agent", node_id=node.id)
        prepare_failover(model, context, on_failover)
        live = None if on_activity is None else _TurnActivity(on_activity)
        app = build_agent_graph(model.bind_tools(toolbox.schemas()), toolbox, self._checkpointer(), cancel, live)
        execution = _NodeExecution(
            node, agent, model, model_name_of(model, agent), toolbox, tracker, on_turn, max_turns
        )
        if live is not None:
            live.execution = execution
        resume = agent_resume_for(node.id, context)
        try:
            if resume is not None:
                return self._continue(app, execution, resume, 2 * max_turns + 4)
            thread_id = self._thread_id(node, context)
            config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 2 * max_turns + 4}
            with self._thread_lock(thread_id):  # parallel branches sharing a `full` thread take turns
                saved = app.get_state(config).values.get("messages", [])
                opening = [*unanswered_tool_calls(saved), HumanMessage(prompt)]
                return execution.drive(app, {"messages": opening, "outcome": None}, config)
        finally:
            self.usage.add(node.id, execution.usage)

    def _continue(self, app: Any, execution: _NodeExecution, resume: AgentResume, limit: int) -> str | Outcome:
        """Continue the node's agent after a recorded turn (`resume --turn`): the conversation as it was saved
        after that turn, forked from that checkpoint, turns numbered on from it. A turn that ended the loop
        (a final answer or a reported outcome) ends the node again with that result, without a model call."""
        node = execution.node.id
        try:
            ref = AgentStateRef.parse(resume.agent_state_ref or "")
        except ValueError:
            return Outcome.fail(
                f"node {node}: cannot continue turn {resume.turn_number}: its agent state "
                f"{resume.agent_state_ref or '(none)'} is not a LangGraph checkpoint"
            )
        config: dict[str, Any] = {**ref.config(), "recursion_limit": limit}
        with self._thread_lock(ref.thread_id):
            saved = app.get_state(config)
            messages = saved.values.get("messages", []) if saved is not None else []
            if not messages:
                return Outcome.fail(
                    f"node {node}: cannot continue turn {resume.turn_number}: its agent state {ref.render()} "
                    f"is not in {self._state_path}"
                )
            execution.turn_number = resume.turn_number + 1
            if resume.message:  # an interactive node: the human's message goes on from that turn's conversation
                opening = [*unanswered_tool_calls(messages), HumanMessage(resume.message)]
                return execution.drive(app, {"messages": opening, "outcome": None}, config)
            if saved.next:
                return execution.drive(app, None, config)
            return execution.ended(messages, saved.values.get("outcome"))

    def _thread_lock(self, thread_id: str) -> threading.Lock:
        with self._lock:
            return self._thread_locks.setdefault(thread_id, threading.Lock())

    def _tools(
        self, node: Node, agent: AgentModelChoice, context: Context, tracker: WriteTracker
    ) -> list[AgentTool]:
        tools = list(self._toolset.tools_for(node, agent, context, tracker))
        hooks = self._tool_hooks(node, context) if self._tool_hooks is not None else None
        return hooks.wrap(tools) if hooks is not None else tools

    def agent_messages(self, ref: str) -> list[dict[str, Any]] | None:
        """The conversation saved at an AgentTurn's `agent_state_ref` (None when no such checkpoint exists).

        Raises:
            ValueError: `ref` is not a LangGraph agent state reference.
        """
        saved = self._checkpointer().get_tuple(AgentStateRef.parse(ref).config())
        if saved is None:
            return None
        messages = saved.checkpoint["channel_values"].get("messages", [])
        return [message_record(message, lambda name: name) for message in messages]

    def close(self) -> None:
        """Close the agent state database."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
            self._connection, self._saver = None, None

    def _checkpointer(self) -> SqliteSaver:
        with self._lock:
            if self._saver is None:
                self._state_path.parent.mkdir(parents=True, exist_ok=True)
                self._connection = sqlite3.connect(self._state_path, check_same_thread=False)
                self._connection.execute("PRAGMA journal_mode=WAL")
                self._saver = SqliteSaver(self._connection)
            return self._saver

    def _thread_id(self, node: Node, context: Context) -> str:
        session = context.get_string("internal.session_id") or self._fallback_session
        if context.get_string("internal.fidelity") == "full":
            return f"{session}/{context.get_string('internal.thread_key') or node.id}"
        return f"{session}/{node.id}/{uuid.uuid4().hex[:12]}"


@define
class _TurnActivity:
    """The backend's `on_activity`, each activity numbered with the turn the execution is in."""

    on_activity: OnActivity
    execution: _NodeExecution | None = None

    def __call__(self, activity: Activity) -> None:
        turn = self.execution.turn_number if self.execution is not None else None
        self.on_activity(evolve(activity, turn=turn))


@define
class _NodeExecution:
    """One run of a node's agent loop: assembles turns from LangGraph's stream and reports them."""

    node: Node
    agent: AgentModelChoice
    model: Any  # the chat model (a FailoverChatModel says which of its models answered)
    model_name: str
    toolbox: Toolbox
    tracker: WriteTracker
    on_turn: OnTurn | None
    max_turns: int
    usage: NodeUsage = field(factory=NodeUsage)
    turn_number: int = 0
    turn_messages: list[BaseMessage] = field(factory=list)
    turn_started: float = field(factory=time.monotonic)
    turn_complete: bool = False
    reply: AIMessage | None = None
    outcome: Outcome | None = None

    def drive(self, app: Any, graph_input: dict[str, Any] | None, config: dict[str, Any]) -> str | Outcome:
        """Stream the graph, emitting a turn at each checkpoint that ends one; returns the node's result.

        `graph_input` None continues the thread from the checkpoint `config` names (resuming an agent).
        """
        started = self.turn_started = time.monotonic()
        self.turn_messages = list(graph_input["messages"]) if graph_input else []
        stream = app.stream(graph_input, config, stream_mode=["updates", "checkpoints"], durability="sync")
        try:
            with closing(stream):
                for mode, chunk in stream:
                    if mode == "updates":
                        self._absorb(chunk)
                    elif self.turn_complete:
                        self._finish_turn(chunk["config"]["configurable"])
                        if self._out_of_turns():
                            return Outcome.fail(
                                f"the agent used all {self.max_turns} turns ({MAX_TURNS_ATTR}) without finishing"
                            )
        except ModelCallError as error:
            provider, model, _, _ = answering_model(self.model, self.agent.provider, self.model_name)
            return model_failure(error.cause, provider, model)
        finally:
            self.usage = evolve(self.usage, duration_s=time.monotonic() - started)
        return self._result()

    def _absorb(self, update: dict[str, Any]) -> None:
        if MODEL_NODE in update:
            (reply,) = update[MODEL_NODE]["messages"]
            self.reply = reply
            self.turn_messages.append(reply)
            self.usage = self.usage.with_call(token_usage(reply))
            self.turn_complete = not reply.tool_calls
        if TOOLS_NODE in update:
            self.turn_messages.extend(update[TOOLS_NODE]["messages"])
            reported = update[TOOLS_NODE].get("outcome")
            if reported is not None:
                self.outcome = Outcome.from_status_json(reported)
            self.turn_complete = True

    def _finish_turn(self, checkpoint: dict[str, Any]) -> None:
        assert self.reply is not None
        tool_results = [message for message in self.turn_messages if isinstance(message, ToolMessage)]
        provider, model, requested, reason = answering_model(self.model, self.agent.provider, self.model_name)
        turn = AgentTurn(
            node_id=self.node.id,
            turn_number=self.turn_number,
            model=model,
            provider=provider,
            messages=[message_record(message, self.toolbox.orchestra_name) for message in self.turn_messages],
            tool_calls=tool_call_records(self.reply, tool_results, self.toolbox.orchestra_name),
            files_written=self.tracker.flush(),
            token_usage=token_usage(self.reply),
            agent_state_ref=AgentStateRef(checkpoint["thread_id"], checkpoint["checkpoint_id"]).render(),
            duration_s=time.monotonic() - self.turn_started,
            requested_model=requested,
            fallback_reason=reason,
        )
        self.usage = evolve(self.usage, turns=self.usage.turns + 1)
        self.turn_number += 1
        self.turn_messages, self.turn_complete = [], False
        if self.on_turn is not None:
            self.on_turn(turn)
        self.turn_started = time.monotonic()  # the callback's commit time belongs to no turn

    def ended(self, messages: list[BaseMessage], outcome: dict[str, Any] | None) -> str | Outcome:
        """The node's result when its saved conversation had already ended (nothing left to run)."""
        replies = [message for message in messages if isinstance(message, AIMessage)]
        self.reply = replies[-1] if replies else None
        self.outcome = Outcome.from_status_json(outcome) if outcome is not None else None
        return self._result()

    def _out_of_turns(self) -> bool:
        return (
            self.turn_number >= self.max_turns
            and self.outcome is None
            and bool(self.reply and self.reply.tool_calls)
        )

    def _result(self) -> str | Outcome:
        text = content_text(self.reply.content) if self.reply is not None else ""
        if self.outcome is None:
            return text
        return self.outcome if self.outcome.notes else evolve(self.outcome, notes=text)
