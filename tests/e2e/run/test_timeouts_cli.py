"""A timeout stops what it times out, and a bug is not retried.

- An agent's command tool that would write a file after its node's timeout is killed (with its process group)
  when the attempt is cancelled; the retry starts only after that, and the file never appears.
- A programming error in Orchestra's code (here an AttributeError planted in the tool handler) fails the run
  at once: one attempt although the node allows four, exit 70 with a one-line message, the traceback in the
  stage's `traceback.txt`, and the session recorded as failed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import orchestra, run_json

pytestmark = pytest.mark.slow

CASSETTE = """nodes:
  work:
    - content: "Writing it slowly."
      tool_calls:
        - name: "project:slow-write"
          args: {}
    - content: "Done on the second attempt."
"""
PIPELINE = """digraph slow {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [prompt="write it", agent.tools="project:slow-write", timeout="1s", max_retries=1, retry_initial_delay="10ms"]
    linger [shape=parallelogram, tool_command="sleep 3.5"]
    start -> work -> linger -> done
}
"""


def _config(marks: Path) -> str:
    command = f"echo started >> {marks}/starts; sleep 3; echo late >> {marks}/late"
    return (
        "providers:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\n"
        "backend: langgraph\n"
        "workspace:\n  repos:\n    project: {path: .}\n"
        "  tools:\n    project:\n      slow-write:\n"
        f"        command: {json.dumps(command)}\n"
        "        description: writes a file, slowly\n"
        "        timeout: 60s\n"
    )


def test_a_timed_out_attempt_is_cancelled_before_its_retry_and_never_writes(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = make_repo(
        tmp_path / "project",
        {"orchestra.yaml": _config(marks), "cassette.yaml": CASSETTE, "slow.dot": PIPELINE},
    )
    document = run_json("run", "slow.dot", cwd=repo.path)
    assert document["status"] == "success", document
    assert (marks / "starts").read_text().splitlines() == ["started"]  # the retry made no tool call
    # `linger` kept the runner alive past the moment the command would have written (an abandoned command
    # would have, and would have been killed only with the runner)
    assert not (marks / "late").exists(), "the timed-out attempt's command kept running and wrote"
    shown = run_json("status", document["session_id"], cwd=repo.path)
    work = [node for node in shown["nodes"] if node["id"] == "work"]
    assert work and work[-1]["attempts"] == 2, work
    assert work[-1]["duration_s"] < 2.5, work  # the command was killed at the timeout, not waited for (3 s)


CRASHING_HANDLER = """
import orchestra_core.handlers.tool as tool

def execute(self, node, context, graph, stage):
    with open(stage.logs_root + "/../attempts", "a") as marks:
        marks.write("attempt\\n")
    return None.missing_attribute  # a bug in Orchestra's own code

tool.ToolHandler.execute = execute
"""
BUGGY = """digraph buggy {
    start [shape=Mdiamond]; done [shape=Msquare]
    boom [shape=parallelogram, tool_command="true", max_retries=3, retry_initial_delay="10ms"]
    start -> boom -> done
}
"""


def test_a_programming_error_fails_the_run_at_once_with_exit_70_and_its_traceback(tmp_path: Path) -> None:
    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(CRASHING_HANDLER, encoding="utf-8")
    root = tmp_path / "project"
    root.mkdir()
    (root / "buggy.dot").write_text(BUGGY, encoding="utf-8")
    logs = tmp_path / "logs"
    env = {**os.environ, "PYTHONPATH": str(plant)}
    result = orchestra("run", "buggy.dot", "--quiet", "--logs-root", logs, cwd=root, env=env)
    assert result.returncode == 70, result.stderr + result.stdout
    assert (tmp_path / "attempts").read_text().splitlines() == ["attempt"]  # not retried
    [message] = [line for line in result.stderr.splitlines() if "internal error" in line]
    assert "AttributeError" in message and "boom" in message and "traceback.txt" in message
    traceback = (logs / "boom" / "traceback.txt").read_text()
    assert traceback.startswith("Traceback") and "missing_attribute" in traceback
    listed = run_json("status", cwd=root)["sessions"]
    assert [row["status"] for row in listed] == ["fail"]
    shown = run_json("status", listed[0]["session_id"], cwd=root)
    assert "AttributeError" in shown["error"]
