"""A runner killed inside a tool node: `orchestra resume` records the node as interrupted, runs it once more, and
never runs a node that had finished before it; `orchestra status` shows the interruption."""

from __future__ import annotations

import json
import re

import pytest

from orchestra_core.model import records as r
from tests.e2e.sessions.projects import STEP_NODES, Project
from tests.support.sessions import records, story

pytestmark = pytest.mark.slow


def test_resume_records_the_interrupted_node_then_runs_it_exactly_once_more(project: Project) -> None:
    project.hold()
    process = project.spawn("run", "steps.dot", "--quiet")
    project.wait_in_gate(process)
    project.kill(process)
    assert project.ran() == ["one", "gate"]

    project.release()
    resumed = project.run_json("resume", "1")
    assert resumed["status"] == "success" and resumed["completed_nodes"] == STEP_NODES
    assert project.ran() == ["one", "gate", "gate", "three"]  # `one` finished before: it did not run again

    with project.open_store() as store:
        lines = story(store, "1")
        interrupted = [
            x for x in records(store, "1") if isinstance(x, r.NodeExecution) and x.event is r.NodeEvent.INTERRUPTED
        ]
    at = lines.index("node gate interrupted")
    assert lines[at - 2 : at + 3] == [
        "checkpoint plan", "node gate started", "node gate interrupted", "lifecycle resumed", "node gate started",
    ]
    assert [(x.node_id, x.handler_type, x.attempt) for x in interrupted] == [("gate", "tool", 1)]
    assert lines.count("node one started") == 1

    status = json.loads(project.cli("status", "1", "--json").stdout)
    assert [(node["id"], node["status"]) for node in status["nodes"] if node["id"] == "gate"] == [
        ("gate", "interrupted"), ("gate", "success"),
    ]
    text = project.cli("status", "1").stdout
    assert re.search(r"\bgate\s+tool\s+interrupted\s+1\b", text), text


def test_a_resume_with_nothing_left_running_records_no_interruption(project: Project) -> None:
    process = project.spawn("run", "steps.dot", "--quiet")
    assert process.wait(60) == 0
    assert project.run_json("resume", "1")["status"] == "success"  # already ended: reported, not run
    project.hold()
    process = project.spawn("run", "steps.dot", "--quiet")
    project.wait_in_gate(process)
    process.send_signal(2)  # Ctrl-C: the session is marked interrupted, and so is the node on resume
    assert process.wait(30) == 130
    project.kill_gate_tool()
    project.release()
    assert project.run_json("resume", "2")["status"] == "success"
    with project.open_store() as store:
        assert "node gate interrupted" not in story(store, "1")
        assert story(store, "2").count("node gate interrupted") == 1
