"""Reading `--answers FILE.yaml`: node id -> the answers its human gate gets, in order.

    review_gate: approve            # one answer: a choice's key, label or target node id
    deploy_gate: [R, "[A] Approve"]  # several: the first time the gate asks, then the second time
"""

from __future__ import annotations

from pathlib import Path

from orchestra_core.interview.interviewers import AnswersError, parse_answers


def load_answers_file(path: Path) -> dict[str, list[str]]:
    """Load and check an answers file (a YAML file, read and parsed as every YAML file is).

    Raises:
        AnswersError: The file cannot be read, is not a regular file, is too large, is not YAML, or is
            not a mapping of node ids to answers; the message names the file (and the line when known).
    """
    from orchestra_adapters.config.yaml_source import load_yaml, plain
    from orchestra_core.model.input_files import (
        MAX_YAML_BYTES,
        InputFileError,
        InputFileMissing,
        read_text_file,
    )
    from orchestra_core.model.settings import ConfigError

    try:
        text = read_text_file(path, limit=MAX_YAML_BYTES)
    except InputFileMissing:
        raise AnswersError(f"{path}: answers file not found") from None
    except InputFileError as error:
        raise AnswersError(f"{path}: cannot read the answers file: {error.detail}") from None
    try:
        document = plain(load_yaml(text, str(path)))
    except ConfigError as error:
        where = f"{path}:{error.line}" if error.line is not None else str(path)
        detail = error.detail.removeprefix("YAML syntax error: ")
        raise AnswersError(f"{where}: not valid YAML: {detail}") from None
    return parse_answers(document, str(path))
