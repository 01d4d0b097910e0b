"""Human interaction (Attractor section 6): questions, answers and the built-in interviewers."""

from orchestra_core.interview.interviewers import (
    AnswersError,
    AutoApproveInterviewer,
    CallbackInterviewer,
    InterviewerBase,
    QueueInterviewer,
    RecordingInterviewer,
    StageAnswersInterviewer,
    UnmatchedReplyError,
    answer_from_reply,
    parse_answers,
)
from orchestra_core.model.interview import (
    Answer,
    AnswerValue,
    Option,
    Question,
    QuestionType,
    accelerator_key,
    match_option,
    normalize_label,
)

__all__ = [
    "Answer",
    "AnswerValue",
    "AnswersError",
    "AutoApproveInterviewer",
    "CallbackInterviewer",
    "InterviewerBase",
    "Option",
    "Question",
    "QuestionType",
    "QueueInterviewer",
    "RecordingInterviewer",
    "StageAnswersInterviewer",
    "UnmatchedReplyError",
    "accelerator_key",
    "answer_from_reply",
    "match_option",
    "normalize_label",
    "parse_answers",
]
