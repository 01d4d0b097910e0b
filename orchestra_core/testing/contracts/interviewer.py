"""The Interviewer contract: what every interviewer (fakes, the console, answers files, yours) must do."""

from __future__ import annotations

from orchestra_core.model.interview import Answer, Option, Question, QuestionType
from orchestra_core.ports.interviewer import Interviewer
from orchestra_core.testing.contracts._base import PortContract

CHOICE = Question(
    "Deploy?",
    QuestionType.MULTIPLE_CHOICE,
    (Option("Y", "[Y] Yes, deploy"), Option("N", "[N] No")),
    stage="gate",
)
"""The multiple-choice question of the contract (stage `gate`)."""


class InterviewerContract(PortContract):
    """A runner implements `make_interviewer(replies)`: an interviewer whose human gives these replies
    (option keys, `yes`/`no` or text), in order; `None` stands for a human who gives no reply."""

    def make_interviewer(self, replies: list[str | None]) -> Interviewer:
        """An interviewer whose human answers with `replies`, in order."""
        raise NotImplementedError

    def test_is_an_interviewer(self) -> None:
        assert isinstance(self.make_interviewer([]), Interviewer)

    def test_multiple_choice_answer_names_an_option(self) -> None:
        answer = self.make_interviewer(["N"]).ask(CHOICE)
        assert answer.value == "N"
        assert answer.selected_option == Option("N", "[N] No")

    def test_yes_no(self) -> None:
        question = Question("Sure?", QuestionType.YES_NO, stage="gate")
        assert self.make_interviewer(["yes"]).ask(question) == Answer.yes()
        assert self.make_interviewer(["no"]).ask(question) == Answer.no()

    def test_freeform_text(self) -> None:
        question = Question("Why?", QuestionType.FREEFORM, stage="gate")
        answer = self.make_interviewer(["because it is faster"]).ask(question)
        assert answer.text == "because it is faster"

    def test_no_reply_is_skipped_or_timeout(self) -> None:
        answer = self.make_interviewer([None]).ask(CHOICE)
        assert answer.is_skipped or answer.is_timeout

    def test_ask_multiple_answers_each_in_order(self) -> None:
        question = Question("Sure?", QuestionType.YES_NO, stage="gate")
        answers = self.make_interviewer(["yes", "no"]).ask_multiple([question, question])
        assert answers == [Answer.yes(), Answer.no()]

    def test_inform_needs_no_answer(self) -> None:
        self.make_interviewer([]).inform("starting the deploy", "gate")
