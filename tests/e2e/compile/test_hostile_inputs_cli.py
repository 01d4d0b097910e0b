"""The real `orchestra` binary on hostile inputs: each ends within seconds with exit 1 or 2 and a message
naming the input, never a hang, a traceback or exit 70; with --json a JSON document is on stdout."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from orchestra_core.model.input_files import MAX_PIPELINE_BYTES
from tests.support.orchestra_project import orchestra
from tests.unit.config.test_yaml_bounds import billion_laughs

PIPELINE = """digraph G {
    start  [shape=Mdiamond]
    exit   [shape=Msquare]
    review [shape=hexagon, label="Ship it?"]
    start -> review
    review -> exit [label="[A] Approve"]
}
"""
SCRIPTED = "providers:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\nbackend: langgraph\n"
QUICK = 20  # seconds: far more than any of these needs, far less than a hang


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pipeline.dot").write_text(PIPELINE, encoding="utf-8")
    return tmp_path


def refused(*args: str | Path, cwd: Path, code: int = 2) -> tuple[str, dict[str, Any]]:
    """Run the command with and without --json: both end fast with `code`; the stderr line and the JSON
    error document."""
    started = time.monotonic()
    plain = orchestra(*args, cwd=cwd, timeout=QUICK)
    with_json = orchestra(*args, "--json", cwd=cwd, timeout=QUICK)
    assert time.monotonic() - started < QUICK
    assert plain.returncode == code, plain.stderr
    assert plain.stdout == "" and plain.stderr.startswith("orchestra: error: ")
    assert plain.stderr.count("\n") == 1
    assert with_json.returncode == code and with_json.stderr == plain.stderr
    document = json.loads(with_json.stdout)
    assert document["error"]["exit_code"] == code
    assert plain.stderr == f"orchestra: error: {document['error']['message']}\n"
    return plain.stderr, document["error"]


def no_session_was_created(project: Path) -> None:
    status = orchestra("status", "--json", cwd=project, timeout=QUICK)
    assert json.loads(status.stdout) == {"sessions": []}


def test_a_billion_laughs_orchestra_yaml_is_refused_quickly(project: Path) -> None:
    (project / "orchestra.yaml").write_text(billion_laughs(), encoding="utf-8")
    message, error = refused("compile", "pipeline.dot", cwd=project)
    assert f"{project / 'orchestra.yaml'}:5: YAML aliases here expand to more than" in message
    assert error["file"] == str(project / "orchestra.yaml") and error["line"] == 5


def test_a_billion_laughs_answers_file_is_refused_quickly(project: Path) -> None:
    (project / "answers.yaml").write_text(billion_laughs() + "review: *l9\n", encoding="utf-8")
    message, _ = refused("run", "pipeline.dot", "--backend", "simulate", "--answers", "answers.yaml", cwd=project)
    assert "answers.yaml:5: not valid YAML: YAML aliases here expand" in message
    no_session_was_created(project)


def test_a_billion_laughs_cassette_is_refused_quickly(project: Path) -> None:
    (project / "orchestra.yaml").write_text(SCRIPTED, encoding="utf-8")
    (project / "cassette.yaml").write_text(billion_laughs() + "nodes:\n  review: *l9\n", encoding="utf-8")
    message, _ = refused("run", "pipeline.dot", cwd=project)
    assert "cassette.yaml:5: not valid YAML: YAML aliases here expand" in message
    no_session_was_created(project)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "directory"])
def test_a_pipeline_that_is_not_a_regular_file_is_refused_without_hanging(project: Path, special: str) -> None:
    path = {"/dev/zero": "/dev/zero", "fifo": "pipe.dot", "directory": "."}[special]
    if special == "fifo":
        os.mkfifo(project / path)
    commands = [("compile", path)] + ([("run", path, "--backend", "simulate")] if special == "fifo" else [])
    for command in commands:
        message, error = refused(*command, cwd=project)
        assert message.startswith(f"orchestra: error: {path}: is a ") and "not a regular file" in message
        assert error["file"] == path
    if special == "fifo":
        no_session_was_created(project)


@pytest.mark.parametrize(("option", "path"), [("--config", "pipe.yaml"), ("--answers", "pipe.yaml"), ("--config", "/dev/zero")])
def test_file_options_naming_a_fifo_or_device_are_refused_without_hanging(project: Path, option: str, path: str) -> None:
    os.mkfifo(project / "pipe.yaml")
    message, _ = refused("run", "pipeline.dot", "--backend", "simulate", option, path, cwd=project)
    assert path in message and "not a regular file" in message


def test_logs_root_that_is_not_a_directory_is_refused_before_a_session(project: Path) -> None:
    (project / "afile").write_text("", encoding="utf-8")
    message, _ = refused("run", "pipeline.dot", "--backend", "simulate", "--logs-root", "afile", cwd=project)
    assert "afile: --logs-root must be a directory" in message
    no_session_was_created(project)


def test_a_run_directory_whose_checkpoint_is_a_fifo_is_refused_without_hanging(project: Path) -> None:
    (project / "run").mkdir()
    os.mkfifo(project / "run" / "checkpoint.json")
    message, _ = refused("resume", "--logs-root", "run", "pipeline.dot", "--backend", "simulate", cwd=project)
    assert message == "orchestra: error: run/checkpoint.json: is a FIFO (named pipe), not a regular file\n"


def test_an_oversized_pipeline_is_refused(project: Path) -> None:
    (project / "big.dot").write_bytes(PIPELINE.encode() + b"//" + b"x" * MAX_PIPELINE_BYTES)
    message, _ = refused("compile", "big.dot", cwd=project)
    assert message == "orchestra: error: big.dot: larger than the limit of 4 MiB\n"


def test_non_utf8_file_and_option_are_refused_naming_the_byte(project: Path) -> None:
    (project / "latin.dot").write_bytes(b'digraph G {\n  a [label="caf\xe9"]\n}\n')
    message, error = refused("compile", "latin.dot", cwd=project)
    assert message.startswith("orchestra: error: latin.dot:2: not UTF-8 text: byte 0xe9 at offset 27")
    assert error["line"] == 2
    latin_value = os.fsdecode(b"ticket=caf\xe9")
    message, _ = refused("run", "pipeline.dot", "--backend", "simulate", "--set", latin_value, cwd=project)
    assert "argument 6 ('ticket=caf\\\\xe9') is not UTF-8: byte 0xe9 at offset 10" in message
    no_session_was_created(project)


def test_over_long_values_are_refused(project: Path) -> None:
    message, _ = refused("run", "pipeline.dot", "--backend", "simulate", "--set", "k=" + "v" * 100_000, cwd=project)
    assert "is 100002 characters long; the limit is 65536" in message
    node = "n" * 100_000
    (project / "long.dot").write_text(f"digraph G {{\n  start -> {node}\n}}\n", encoding="utf-8")
    message, _ = refused("compile", "long.dot", cwd=project)
    assert "long.dot:2: node id nnnnnnnnnnnnnnnnnnnn... is 100000 characters long; the limit is 128" in message


def test_a_5000_node_edge_chain_is_parsed_whole(project: Path) -> None:
    chain = " -> ".join(f"n{index}" for index in range(5000))
    (project / "chain.dot").write_text(
        f'digraph G {{\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  start -> {chain} -> exit\n  after [prompt="x"]\n}}\n',
        encoding="utf-8",
    )
    result = orchestra("compile", "chain.dot", "--json", cwd=project, timeout=60)
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert len(document["nodes"]) == 5003 and len(document["edges"]) == 5001
    assert document["edges"][-1] == {"from": "n4999", "to": "exit", "attrs": {}}


def test_usage_errors_give_a_json_document_too(project: Path) -> None:
    result = orchestra("compile", "pipeline.dot", "--json", "--no-such-option", cwd=project, timeout=QUICK)
    assert result.returncode == 2 and "No such option: --no-such-option" in result.stderr
    assert json.loads(result.stdout) == {"error": {"message": "No such option: --no-such-option", "exit_code": 2}}


def test_a_run_stopped_by_validation_errors_gives_a_json_document(project: Path) -> None:
    (project / "invalid.dot").write_text("digraph G { a -> b }\n", encoding="utf-8")
    result = orchestra("run", "invalid.dot", "--backend", "simulate", "--json", cwd=project, timeout=QUICK)
    assert result.returncode == 1
    error = json.loads(result.stdout)["error"]
    assert error["exit_code"] == 1 and error["message"].startswith("invalid.dot: ")
    assert "validation error" in error["message"] and {d["severity"] for d in error["diagnostics"]} == {"error"}
    no_session_was_created(project)


@pytest.mark.parametrize("special", ["fifo", "directory"])
def test_a_discovered_orchestra_yaml_that_is_not_a_file_is_refused_not_skipped(project: Path, special: str) -> None:
    # skipped, it let a run go on with the defaults: a `sandbox:` in it would silently not apply
    os.mkfifo(project / "orchestra.yaml") if special == "fifo" else (project / "orchestra.yaml").mkdir()
    kind = "a FIFO (named pipe)" if special == "fifo" else "a directory"
    for command in (("compile", "pipeline.dot"), ("run", "pipeline.dot", "--backend", "simulate")):
        message, error = refused(*command, cwd=project)
        assert message == f"orchestra: error: {project / 'orchestra.yaml'}: is {kind}, not a regular file\n"
        assert error["file"] == str(project / "orchestra.yaml")
