"""DirectLLMBackend: one model call with the node's prompt, no tools; the call is the node's one agent turn."""

from __future__ import annotations

import time

from langchain_core.messages import HumanMessage

from orchestra_adapters.backends.agent_inputs import AgentResolver, model_name_of, requested_model
from orchestra_adapters.backends.model_errors import model_failure
from orchestra_adapters.backends.turn_records import content_text
from orchestra_adapters.backends.usage import NodeUsage, UsageLedger
from orchestra_adapters.llm.failover import answering_model, prepare_failover
from orchestra_adapters.llm.replies import token_usage
from orchestra_core.model.activity import TEXT, Activity, OnActivity
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node
from orchestra_core.model.outcome import Outcome
from orchestra_core.model.turn import AgentTurn
from orchestra_core.ports.chat_models import ChatModelFactory
from orchestra_core.ports.codergen_backend import OnFailover, OnTurn


class DirectLLMBackend:
    """Sends the composed prompt to the node's model once and returns the reply's text.

    For analysis, review and synthesis nodes that need no files. The call is reported to `on_turn` as one
    AgentTurn (no tools, no files: nothing to commit), so what it cost is recorded and counts toward the budgets;
    its tokens and time are also in `usage`.
    """

    name = "direct"

    def __init__(self, chat_models: ChatModelFactory, resolver: AgentResolver) -> None:
        self.usage = UsageLedger()
        self._chat_models = chat_models
        self._resolver = resolver

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
        """One call; provider failures become RETRY (transient) or FAIL outcomes with the provider's message,
        after the model's fallbacks (`on_failover` hears of each switch); `on_activity` hears the reply's text. A `cancel` set (or asked to stop at a
        turn boundary) before the call stops it from being made (a call in flight cannot be taken back; it writes
        nothing)."""
        if cancel is not None:
            cancel.raise_if_stopped()
        agent = self._resolver.resolve(node, context)
        model = self._chat_models.create(agent.provider, requested_model(agent), purpose="direct", node_id=node.id)
        prepare_failover(model, context, on_failover)
        started = time.monotonic()
        try:
            reply = model.invoke([HumanMessage(prompt)])
        except Exception as error:  # the provider's failure decides the node's outcome
            self.usage.add(node.id, NodeUsage(model_calls=1, duration_s=time.monotonic() - started))
            provider, name, _, _ = answering_model(model, agent.provider, model_name_of(model, agent))
            return model_failure(error, provider, name)
        elapsed = time.monotonic() - started
        tokens = token_usage(reply)
        self.usage.add(node.id, NodeUsage(model_calls=1, turns=1, tokens=tokens, duration_s=elapsed))
        text = content_text(reply.content)
        if on_activity is not None:
            on_activity(Activity(kind=TEXT, text=text, turn=0))
        if on_turn is not None:
            messages = [{"role": "user", "content": prompt}, {"role": "assistant", "content": text}]
            provider, name, requested, reason = answering_model(model, agent.provider, model_name_of(model, agent))
            on_turn(
                AgentTurn(
                    node.id, 0, name, provider, messages, token_usage=tokens, duration_s=elapsed,
                    requested_model=requested, fallback_reason=reason,
                )
            )  # fmt: skip
        return text
