"""The wait.human handler (Attractor 4.6): choices from the outgoing edges, asked through an Interviewer.

Node attributes: `label` (the question; else the prompt; else "Select an option:" / "Your answer:"), `human.timeout`
(a duration; else the node `timeout`), `human.default_choice` (key, label or target node used on timeout;
the answer itself at a freeform gate). A gate whose only outgoing edge has no label is freeform: it asks
for text, writes the question to `prompt.md` and the answer to `response.md`, and goes on along its edge.
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestra_core.engine.stage import StageRun
from orchestra_core.graph.gate_choices import Choice, find_choice, gate_choices, is_freeform
from orchestra_core.handlers.codergen import expand_goal, truncate
from orchestra_core.model.context import Context
from orchestra_core.model.events import InterviewCompleted, InterviewStarted, InterviewTimeout
from orchestra_core.model.graph import Graph, Node
from orchestra_core.model.interview import Answer, Question, QuestionType
from orchestra_core.model.outcome import Outcome, StageStatus
from orchestra_core.ports.interviewer import Interviewer


class WaitForHumanHandler:
    """Blocks until the interviewer answers; routes by the chosen edge (preferred label and target).

    An answer that names no choice is a FAIL (never a silent pick of the first option).
    """

    enforces_timeout = True

    def __init__(self, interviewer: Interviewer | None) -> None:
        self.interviewer = interviewer

    def execute(self, node: Node, context: Context, graph: Graph, stage: StageRun) -> Outcome:
        choices = gate_choices(node, graph)
        if not choices:
            return Outcome.fail("No outgoing edges for human gate")
        if self.interviewer is None:
            return Outcome.fail("no interviewer is configured for human gates (use --auto-approve or --answers)")
        freeform = is_freeform(node, graph)
        asked = node.attrs.get("label") or node.prompt or ("Your answer:" if freeform else "Select an option:")
        text = expand_goal(asked, graph)
        if freeform:
            return self._freeform(node, text, choices[0], stage)
        question = Question(
            text=text,
            type=QuestionType.MULTIPLE_CHOICE,
            options=tuple(c.option for c in choices),
            timeout_seconds=node.get_duration("human.timeout", stage.timeout),
            stage=node.id,
            metadata={"targets": {c.key: c.target for c in choices}},
        )
        answer = self._ask(question, stage)
        if answer.is_timeout:
            return self._on_timeout(node, choices)
        if answer.is_skipped:
            return Outcome.fail("human skipped interaction")
        selected = _answered_choice(choices, answer)
        if selected is None:
            offered = ", ".join(c.label for c in choices)
            return Outcome.fail(f"answer {answer.value!r} matches none of the choices: {offered}")
        return _selected(selected, "human selected")

    def _freeform(self, node: Node, text: str, choice: Choice, stage: StageRun) -> Outcome:
        """Ask for free text; the gate records it like an LLM stage (prompt.md, response.md)."""
        question = Question(
            text=text,
            type=QuestionType.FREEFORM,
            timeout_seconds=node.get_duration("human.timeout", stage.timeout),
            stage=node.id,
            metadata={"targets": {choice.key: choice.target}},
        )
        stage.write("prompt.md", text)
        answer = self._ask(question, stage)
        if answer.is_skipped:
            return Outcome.fail("human skipped interaction")
        how, reply = "human answered", answer.text or answer.value
        if answer.is_timeout:
            how, reply = "timeout, default answer", node.get("human.default_choice")
            if not reply:
                return Outcome(StageStatus.RETRY, failure_reason="human gate timeout, no default")
        stage.write("response.md", reply)
        return _selected(choice, how, reply)

    def _ask(self, question: Question, stage: StageRun) -> Answer:
        """The interviewer's answer, with the interview's events."""
        assert self.interviewer is not None
        clock = stage.engine.clock
        stage.emit(InterviewStarted, question=question, stage=question.stage)
        started = clock.monotonic()
        answer = self.interviewer.ask(question)
        duration = clock.monotonic() - started
        if answer.is_timeout:
            stage.emit(InterviewTimeout, question=question, stage=question.stage, duration_s=duration)
        else:
            stage.emit(InterviewCompleted, question=question, answer=answer, duration_s=duration)
        return answer

    def _on_timeout(self, node: Node, choices: Sequence[Choice]) -> Outcome:
        default = node.get("human.default_choice")
        if not default:
            return Outcome(StageStatus.RETRY, failure_reason="human gate timeout, no default")
        selected = find_choice(choices, default)
        if selected is None:
            return Outcome.fail(f"human.default_choice={default!r} matches none of the choices")
        return _selected(selected, "timeout, default choice")


def _answered_choice(choices: Sequence[Choice], answer: Answer) -> Choice | None:
    if answer.selected_option is not None:
        found = find_choice(choices, answer.selected_option.key)
        if found is not None:
            return found
    return find_choice(choices, answer.value) or (find_choice(choices, answer.text) if answer.text else None)


def _selected(choice: Choice, how: str, text: str | None = None) -> Outcome:
    """Route along the choice; `text` is a freeform gate's answer (`human.gate.text`)."""
    updates = {"human.gate.selected": choice.key, "human.gate.label": choice.label}
    if text is not None:
        updates["human.gate.text"] = text
    return Outcome(
        StageStatus.SUCCESS,
        preferred_label=choice.label,
        suggested_next_ids=(choice.target,),
        context_updates=updates,
        notes=f"{how}: {truncate(text, 200) if text is not None else choice.label}",
    )
