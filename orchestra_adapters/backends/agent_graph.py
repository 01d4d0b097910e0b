"""The agent loop as a small LangGraph StateGraph: model -> tools -> model ... until no tool calls."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage, message_chunk_to_message
from langchain_core.runnables import Runnable
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph, add_messages

from orchestra_adapters.backends.turn_records import content_text
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.model.activity import TEXT, TOOL_CALL, TOOL_RESULT, Activity, OnActivity
from orchestra_core.model.cancellation import Cancellation, cancellation_scope

MODEL_NODE = "model"
TOOLS_NODE = "tools"


class AgentState(TypedDict):
    """The checkpointed state: the conversation, and the Outcome a `report_outcome` call recorded."""

    messages: Annotated[list[AnyMessage], add_messages]
    outcome: dict[str, Any] | None


class ModelCallError(Exception):
    """The chat model raised; `cause` is the provider's own error."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def streamed_reply(model: Runnable, messages: list[AnyMessage], on_activity: OnActivity) -> BaseMessage:
    """The model's reply, streamed: each chunk's text goes to `on_activity` as it comes; the chunks added up
    (their tool call chunks assembled, usage and response metadata merged) make the message `invoke` returns."""
    reply: Any = None
    for chunk in model.stream(messages):
        text = content_text(getattr(chunk, "content", ""))
        if text:
            on_activity(Activity(kind=TEXT, text=text))
        reply = chunk if reply is None else reply + chunk
    return AIMessage(content="") if reply is None else message_chunk_to_message(reply)


def build_agent_graph(
    model: Runnable,
    toolbox: Toolbox,
    checkpointer: BaseCheckpointSaver,
    cancel: Cancellation | None = None,
    on_activity: OnActivity | None = None,
) -> Any:
    """Compile the loop for one node execution (`model` already has the toolbox's tools bound). Once `cancel`
    is set, no model call and no tool call starts (StageCancelled is raised instead); once it asks to stop at the
    turn boundary (a budget), no model call starts (TurnsStopped). With `on_activity` the model's reply is
    streamed and its text heard chunk by chunk as it is generated; it hears each tool call before it runs and its
    result after. Without it, the model is invoked (nobody watches: nothing to stream for)."""

    def report(activity: Activity) -> None:
        if on_activity is not None:
            on_activity(activity)

    def stop_if_cancelled() -> None:
        if cancel is not None:
            cancel.raise_if_cancelled()

    def call_model(state: AgentState) -> dict[str, Any]:
        if cancel is not None:
            cancel.raise_if_stopped()
        try:
            if on_activity is None:
                reply = model.invoke(state["messages"])
            else:
                reply = streamed_reply(model, state["messages"], on_activity)
        except Exception as error:  # the driver turns provider failures into RETRY/FAIL outcomes
            raise ModelCallError(error) from error
        return {"messages": [reply]}

    def run_tools(state: AgentState) -> dict[str, Any]:
        reply = state["messages"][-1]
        assert isinstance(reply, AIMessage)
        messages, outcome = [], None
        for call in reply.tool_calls:
            stop_if_cancelled()
            started_at, started = time.time(), time.monotonic()
            arguments = json.dumps(call["args"], ensure_ascii=False, default=str)
            report(
                Activity(
                    kind=TOOL_CALL,
                    tool=toolbox.orchestra_name(call["name"]),
                    text=arguments,
                    call_id=call["id"] or "",
                )
            )
            with cancellation_scope(cancel):  # a command tool's runner kills its process group on cancel
                executed = toolbox.execute(call["name"], call["args"], call["id"] or "")
            record = executed.record
            report(
                Activity(
                    kind=TOOL_RESULT,
                    tool=record.name,
                    text=executed.text,
                    call_id=record.call_id,
                    error=executed.failed,
                )
            )
            timing = {
                "started_at": started_at,
                "duration_s": time.monotonic() - started,
            }  # the call's trace span
            messages.append(
                ToolMessage(
                    executed.text,
                    tool_call_id=record.call_id,
                    name=call["name"],
                    status="error" if executed.failed else "success",
                    artifact={"tool": record.name, "error": record.error, **timing},
                )
            )
            if executed.outcome is not None:
                outcome = executed.outcome.to_status_json()
        update: dict[str, Any] = {"messages": messages}
        if outcome is not None:
            update["outcome"] = outcome
        return update

    def after_model(state: AgentState) -> str:
        reply = state["messages"][-1]
        return TOOLS_NODE if isinstance(reply, AIMessage) and reply.tool_calls else END

    def after_tools(state: AgentState) -> str:
        return END if state.get("outcome") is not None else MODEL_NODE

    graph = StateGraph(AgentState)
    graph.add_node(MODEL_NODE, call_model)
    graph.add_node(TOOLS_NODE, run_tools)
    graph.add_edge(START, MODEL_NODE)
    graph.add_conditional_edges(MODEL_NODE, after_model, [TOOLS_NODE, END])
    graph.add_conditional_edges(TOOLS_NODE, after_tools, [MODEL_NODE, END])
    return graph.compile(checkpointer=checkpointer)
