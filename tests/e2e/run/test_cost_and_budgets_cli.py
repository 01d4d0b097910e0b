"""Cost and budgets through the `orchestra` CLI, with the scripted provider's exact `usage`: what each turn, node
and session cost in `status --json` (cache reads and writes at their prices, commit messages with their turn), a
model without a price, a budget that stops a run (exit 3, the in-flight turn committed) and the resume that goes on,
and bad budget input refused before a session exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repos import git
from tests.support.orchestra_project import orchestra, run_json, write_files
from tests.support.webhook_receiver import webhook_receiver

CONFIG = """\
providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
    models: {worker: claude-sonnet-4-5-20250929, cheap: claude-haiku-4-5}
backend: langgraph
workspace:
  repos:
    project: {path: .}
pricing:
  claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
"""
CASSETTE = """\
nodes:
  plan:
    - content: Plan it.
      usage: {input_tokens: 1000, output_tokens: 100, cache_read_tokens: 400, cache_write_tokens: 100}
  implement:
    - content: Writing.
      tool_calls: [{name: "project:write-file", args: {path: hello.txt, content: hi}}]
      usage: {input_tokens: 2000, output_tokens: 200}
    - content: Done.
      usage: {input_tokens: 3000, output_tokens: 50}
commit_messages:
  - content: Add hello.txt
    usage: {input_tokens: 500, output_tokens: 20}
"""
PIPELINE = """\
digraph ship {
    goal="Say hello"
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan"]; implement [prompt="Implement"]
    start -> plan -> implement -> done
}
"""
# plan: 500 uncached x $3 + 400 read x $0.30 + 100 written x $3.75 + 100 out x $15, per million tokens
PLAN = 0.003495
# implement's first turn: 2,000 in x $3 + 200 out x $15, and its commit message by claude-haiku-4-5 (built in:
# $1 in, $5 out): 500 x $1 + 20 x $5
IMPLEMENT_0 = 0.009 + 0.0006
IMPLEMENT_1 = 0.00975  # 3,000 in x $3 + 50 out x $15


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_files(root, {"orchestra.yaml": CONFIG, "cassette.yaml": CASSETTE, "pipeline.dot": PIPELINE})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    return root


def _status(root: Path, session: str = "1") -> dict[str, Any]:
    return run_json("status", session, cwd=root)


def _agent_turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [turn for turn in document["turns"] if turn["type"] == "dev.orchestra.AgentTurn"]


def test_status_shows_the_exact_cost_of_each_turn_node_and_the_session(project: Path) -> None:
    ran = orchestra("run", "pipeline.dot", cwd=project)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert ran.stdout.strip().splitlines()[-1] == "cost    $0.0228"  # $0.022845, shown to four decimals

    document = _status(project)
    turns = _agent_turns(document)
    assert [(t["node_id"], t["cost_usd"]) for t in turns] == [
        ("plan", PLAN), ("implement", pytest.approx(IMPLEMENT_0, abs=1e-12)), ("implement", IMPLEMENT_1),
    ]
    assert turns[0]["tokens"] == {
        "prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100, "cache_read_tokens": 400,
        "cache_write_tokens": 100,
    }
    nodes = {node["id"]: node for node in document["nodes"]}
    assert nodes["plan"]["cost_usd"] == PLAN and nodes["implement"]["cost_usd"] == pytest.approx(IMPLEMENT_0 + IMPLEMENT_1)
    assert document["cost_usd"] == pytest.approx(PLAN + IMPLEMENT_0 + IMPLEMENT_1) and document["cost_complete"]
    (row,) = run_json("status", cwd=project)["sessions"]
    assert row["cost_usd"] == document["cost_usd"] and row["cost_complete"] is True

    text = orchestra("status", "1", cwd=project).stdout
    assert "cost     $0.0228" in text and "$0.003495" in text


def test_a_model_without_a_price_is_unknown_never_zero_with_one_warning(project: Path) -> None:
    config = CONFIG.replace("worker: claude-sonnet-4-5-20250929", "worker: acme-unpriced-1")
    write_files(project, {"orchestra.yaml": config})
    ran = orchestra("run", "pipeline.dot", cwd=project)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    warning = (
        "! warning: model acme-unpriced-1 has no price, so the cost of its turns is unknown (never counted as zero); "
        "add it under pricing: in orchestra.yaml"
    )
    assert ran.stdout.count(warning) == 1  # once per run and model, for three turns
    document = _status(project)
    assert [t["cost_usd"] for t in _agent_turns(document)] == [None, None, None]
    # the commit message's cost is known but its turn's model's is not: the turn is unknown; so is the session
    assert (document["cost_usd"], document["cost_complete"]) == (None, False)
    assert [t["model"] for t in document["turns"] if t["type"] == "dev.orchestra.ModelPriceUnknown"] == [
        "acme-unpriced-1"
    ]
    text = orchestra("status", "1", cwd=project).stdout
    assert "cost     unknown (3 turns)" in text and warning.removeprefix("! ") in text


def test_a_budget_stops_the_run_after_the_turn_in_flight_and_a_resume_with_more_finishes(project: Path) -> None:
    write_files(project, {"orchestra.yaml": CONFIG + "budget: {max_cost_usd: 0.004}\n"})
    ran = orchestra("run", "pipeline.dot", cwd=project)

    assert ran.returncode == 3, ran.stderr + ran.stdout
    spent = f"${PLAN + IMPLEMENT_0:.4f}"
    message = (
        f"the session's budget max_cost_usd is reached: {spent} spent of $0.004; continue with: orchestra resume 1 "
        "--max-cost 1"
    )
    assert ran.stderr.strip().splitlines()[-1] == f"orchestra: session 1 stopped: {message}"
    assert ran.stdout.strip().splitlines()[-1] == f"stopped {message}"
    assert "! warning: 80% of the session's budget max_cost_usd is spent: $0.003495 of $0.004" in ran.stdout
    document = _status(project)
    assert document["status"] == "budget_exceeded" and document["error"] == message
    # the turn in flight finished and was committed on the session branch; no further model call was made
    turns = _agent_turns(document)
    assert [(t["node_id"], t["turn_number"]) for t in turns] == [("plan", 0), ("implement", 0)]
    branch = document["repos"]["project"]["branch"]
    assert git(project, "show", f"{branch}:hello.txt") == "hi" and turns[1]["git_sha"]
    assert [t["budget"] for t in document["turns"] if t["type"] == "dev.orchestra.BudgetWarning"] == ["max_cost_usd"]

    attached = orchestra("attach", "1", cwd=project)  # a finished session: its history, then the exit status
    assert attached.returncode == 3 and f"pipeline stopped by its budget: {message}" in attached.stdout
    assert "warning: 80% of the session's budget max_cost_usd is spent" in attached.stdout
    again = orchestra("resume", "1", cwd=project)  # without a higher budget: stopped again at once
    assert again.returncode == 3 and again.stderr.strip().splitlines()[-1].endswith(message)

    resumed = orchestra("resume", "1", "--max-cost", "1", cwd=project)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    document = _status(project)
    assert document["status"] == "success" and document["cost_complete"]
    assert document["cost_usd"] > PLAN + IMPLEMENT_0  # what the session spent before counts, plus the rest


def test_a_budget_stop_is_notified_with_its_cost_and_the_resume_then_tells_the_whole_sessions(project: Path) -> None:
    with webhook_receiver() as receiver:
        notify = f"notify:\n  - url: {receiver.url}\n    events: [finished, budget_exceeded]\n"
        write_files(project, {"orchestra.yaml": CONFIG + "budget: {max_cost_usd: 0.004}\n" + notify})
        assert orchestra("run", "pipeline.dot", cwd=project).returncode == 3
        assert orchestra("resume", "1", "--max-cost", "1", cwd=project).returncode == 0
        stopped, finished = (request.json() for request in receiver.received)
    assert (stopped["event"], stopped["status"], stopped["resume"]) == (
        "budget_exceeded", "budget_exceeded", "orchestra resume 1",
    )  # fmt: skip
    assert "max_cost_usd is reached" in stopped["failure_reason"] and "--max-cost" in stopped["failure_reason"]
    assert stopped["cost_usd"] == pytest.approx(PLAN + IMPLEMENT_0) and stopped["cost_complete"] is True
    assert finished["event"] == "finished" and finished["cost_usd"] == pytest.approx(_status(project)["cost_usd"])
    # both runs: plan and implement's first turn, then implement run again (its node had not completed)
    assert finished["cost_usd"] == pytest.approx(PLAN + 2 * IMPLEMENT_0 + IMPLEMENT_1)


def test_replay_takes_a_budget_and_starts_from_what_the_session_had_spent(project: Path) -> None:
    assert orchestra("run", "pipeline.dot", cwd=project).returncode == 0
    checkpoints = _status(project)["checkpoints"]
    after_plan = next(c["turn_id"] for c in checkpoints if c["node_id"] == "plan")
    replayed = orchestra("replay", "1", "--checkpoint", after_plan, "--max-cost", "0.005", "--json", cwd=project)
    assert replayed.returncode == 3, replayed.stderr
    result = json.loads(replayed.stdout)
    assert result["status"] == "budget_exceeded" and result["session_id"] == "2"
    assert f"${PLAN + IMPLEMENT_0:.4f} spent of $0.005" in result["failure_reason"]


@pytest.mark.parametrize(
    ("files", "arguments", "expected"),
    [
        ({}, ["--max-cost", "abc"], "orchestra: error: --max-cost: 'abc' is not an amount of US dollars"),
        ({}, ["--max-cost", "-1"], "orchestra: error: --max-cost: '-1' is not an amount of US dollars"),
        ({}, ["--max-tokens", "many"], "orchestra: error: --max-tokens: 'many' is not a number of tokens"),
        ({}, ["--max-wall-time", "forever"], "orchestra: error: --max-wall-time: 'forever' is not a duration"),
        (
            {"orchestra.yaml": CONFIG + "budget: {max_cost_usd: -1}\n"}, [],
            "orchestra.yaml:12: budget.max_cost_usd: expected a number of US dollars above 0",
        ),
        (
            {"orchestra.yaml": CONFIG + "budget:\n  max_wall_time: forever\n"}, [],
            "orchestra.yaml:13: budget.max_wall_time: expected a duration such as 90, 90s, 10m or 1h, got a string "
            "('forever')",
        ),
        (
            {"orchestra.yaml": CONFIG.replace("cache_write: 3.75", "cache_write: lots")}, [],
            "orchestra.yaml:11: pricing.claude-sonnet-4-5.cache_write: expected a number of US dollars of 0 or more",
        ),
    ],
)
def test_bad_budget_and_price_input_is_refused_before_a_session_exists(
    project: Path, files: dict[str, str], arguments: list[str], expected: str
) -> None:
    write_files(project, files)
    ran = orchestra("run", "pipeline.dot", *arguments, cwd=project)
    assert ran.returncode == 2 and expected in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (project / ".orchestra" / "orchestra.db").exists()


def test_a_budget_attribute_that_does_not_parse_stops_the_run_as_a_validation_error(project: Path) -> None:
    write_files(project, {"pipeline.dot": PIPELINE.replace('goal="Say hello"', 'goal="Say hello"; max_cost_usd=-1')})
    ran = orchestra("run", "pipeline.dot", cwd=project)
    assert ran.returncode == 1
    assert "graph: max_cost_usd='-1' is not a positive amount of US dollars" in ran.stderr
    assert not (project / ".orchestra" / "orchestra.db").exists()
