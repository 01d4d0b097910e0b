"""Reading `--answers FILE.yaml`: node id -> the answers its human gate gets, in order.

    review_gate: approve            # one answer: a choice's key, label or target node id
    deploy_gate: [R, "[A] Approve"]  # several: the first time the gate asks, then the second time
"""

from __future__ import annotations

from pathlib import Path

from orchestra_core.interview.interviewers import AnswersError, parse_answers


def load_answers_file(path: Path) -> dict[str, list[str]]:
    """Load and check an answers file.

    Raises:
        AnswersError: The file cannot be read, is not YAML, or is not a mapping of node ids to answers;
            the message names the file (and the line for YAML errors).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnswersError(f"{path}: answers file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise AnswersError(f"{path}: cannot read the answers file: {error}") from None
    try:
        document = YAML(typ="safe", pure=True).load(text)
    except MarkedYAMLError as error:
        line = error.problem_mark.line + 1 if error.problem_mark is not None else "?"
        raise AnswersError(f"{path}:{line}: not valid YAML: {error.problem}") from None
    except YAMLError as error:
        raise AnswersError(f"{path}: not valid YAML: {error}") from None
    return parse_answers(document, str(path))
