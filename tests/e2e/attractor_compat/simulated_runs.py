"""What the Attractor compatibility tests share: `orchestra run` of a pipeline's text, simulated, into a run
directory (`--logs-root`), and that directory's JSON documents."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.orchestra_project import orchestra


def run_pipeline(tmp_path: Path, dot: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`orchestra run` of the pipeline text (written to tmp_path/pipeline.dot), simulated, with `extra`
    options; the result and the logs root."""
    pipeline = tmp_path / "pipeline.dot"
    pipeline.write_text(dot, encoding="utf-8")
    logs = tmp_path / "logs"
    result = orchestra("run", pipeline, "--backend", "simulate", "--logs-root", logs, *extra, cwd=tmp_path)
    return result, logs


def read_json(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def checkpoint(logs: Path) -> dict[str, Any]:
    """The run directory's checkpoint.json."""
    return read_json(logs / "checkpoint.json")


def node_outcome(document: dict[str, Any], node: str) -> dict[str, Any]:
    """A node's outcome in a checkpoint document: an object with its status (and notes, failure_reason)."""
    value = document["node_outcomes"][node]
    assert isinstance(value, dict), f"node {node}'s outcome is not an object: {value!r}"
    return value
