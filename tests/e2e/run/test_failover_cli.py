"""Failover through `orchestra run` with the scripted provider: the requested model's replies are provider errors,
a fallback of another provider answers, and the session, the console and the commits say which model answered
and why it switched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import orchestra, trailers, write_files

CONFIG = """\
providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
    models:
      worker: {model: claude-opus-4, fallbacks: ["backup:gpt-5"]}
      cheap:
        model: claude-haiku-3
        fallbacks: ["backup:gpt-5-nano"]
  backup:
    cassette: cassette.yaml
backend: langgraph
workspace:
  repos:
    app: {path: ../app}
"""
PIPELINE = """digraph failover {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write a.py and b.py"%s]
    review [prompt="Review the change"]
    start -> implement -> review -> exit
}
"""
QUOTA = "insufficient_quota: You exceeded your current quota, please check your plan and billing details."
CASSETTE = f"""\
nodes:
  implement:
    - content: "Adding a.py."
      tool_calls: [{{name: "app:write-file", args: {{path: a.py, content: "A = 1\\n"}}}}]
    - {{error: "{QUOTA}", status_code: 429}}
    - content: "Adding b.py."
      tool_calls: [{{name: "app:write-file", args: {{path: b.py, content: "B = 2\\n"}}}}]
    - "Both written."
  review:
    - "Looks good."
commit_messages: ["Add a", "Add b"]
"""


def project(tmp_path: Path, cassette: str, *, config: str = CONFIG, node_attrs: str = "") -> tuple[Path, GitRepo]:
    app = make_repo(tmp_path / "app", {"README.md": "# App\n"})
    root = tmp_path / "project"
    write_files(root, {"orchestra.yaml": config, "cassette.yaml": cassette, "p.dot": PIPELINE % node_attrs})
    return root, app


def status(root: Path) -> dict[str, Any]:
    result = orchestra("status", "1", "--json", cwd=root)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def of_type(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [turn for turn in document["turns"] if turn["type"] == f"dev.orchestra.{name}"]


def test_used_up_quota_fails_over_to_another_provider_and_every_record_names_the_model_that_answered(tmp_path: Path) -> None:
    root, app = project(tmp_path, CASSETTE)
    result = orchestra("run", "p.dot", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "! implement: model failover: scripted claude-opus-4 failed (credit or quota used up: HTTP 429: "
        f"{QUOTA}); going on with backup gpt-5"
    ) in result.stdout.splitlines()
    assert "  . implement turn 1 (backup gpt-5 for claude-opus-4): app:write-file" in result.stdout

    document = status(root)
    assert document["status"] == "success"
    reason = f"scripted claude-opus-4: credit or quota used up (HTTP 429): {QUOTA}"
    later = f"scripted claude-opus-4: not tried, scripted failed earlier: claude-opus-4: credit or quota used up (HTTP 429): {QUOTA}"
    assert [
        (t["node_id"], t["turn_number"], t["model"], t["provider"], t["requested_model"], t["fallback_reason"])
        for t in of_type(document, "AgentTurn")
    ] == [
        ("implement", 0, "claude-opus-4", "scripted", None, None),
        ("implement", 1, "gpt-5", "backup", "claude-opus-4", reason),
        ("implement", 2, "gpt-5", "backup", "claude-opus-4", reason),
        ("review", 0, "gpt-5", "backup", "claude-opus-4", later),  # the run remembers the used-up provider
    ]
    [failover] = of_type(document, "ModelFailover")
    assert {key: failover[key] for key in ("node_id", "from_provider", "from_model", "to_provider", "to_model", "cause", "reason", "purpose")} == {
        "node_id": "implement", "from_provider": "scripted", "from_model": "claude-opus-4", "to_provider": "backup",
        "to_model": "gpt-5", "cause": "credit", "reason": f"HTTP 429: {QUOTA}", "purpose": "agent",
    }  # fmt: skip

    first, second = (turn["git_sha"] for turn in of_type(document, "AgentTurn")[:2])
    assert (trailers(app, first)["Orchestra-Model"], trailers(app, first)["Orchestra-Provider"]) == ("claude-opus-4", "scripted")
    assert (trailers(app, second)["Orchestra-Model"], trailers(app, second)["Orchestra-Provider"]) == ("gpt-5", "backup")
    # the commit-message model fails over too: its own fallback wrote the second message
    assert [app.git("log", "-1", "--format=%s", sha).strip() for sha in (first, second)] == ["Add a", "Add b"]

    shown = orchestra("status", "1", cwd=root).stdout
    assert "gpt-5 (for claude-opus-4)" in shown


def test_a_bad_request_does_not_switch_models(tmp_path: Path) -> None:
    cassette = "nodes:\n  implement:\n    - {error: 'messages: roles must alternate', status_code: 400}\n    - unused\n"
    root, _ = project(tmp_path, cassette)
    result = orchestra("run", "p.dot", "--json", cwd=root)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["failure_reason"] == (
        "stage implement failed: scripted model claude-opus-4 failed (HTTP 400): messages: roles must alternate"
    )
    assert of_type(status(root), "ModelFailover") == []


def test_when_every_fallback_fails_the_node_fails_naming_every_model_and_reason(tmp_path: Path) -> None:
    cassette = (
        "nodes:\n  implement:\n"
        "    - {error: 'Your credit balance is too low', status_code: 402}\n"
        "    - {error: 'The model `gpt-5` does not exist or you do not have access to it.', status_code: 404}\n"
    )
    root, _ = project(tmp_path, cassette)
    result = orchestra("run", "p.dot", "--json", cwd=root)
    assert result.returncode == 1
    assert json.loads(result.stdout)["failure_reason"] == (
        "stage implement failed: every model failed: scripted claude-opus-4: credit or quota used up (HTTP 402): "
        "Your credit balance is too low; backup gpt-5: model not available (HTTP 404): The model `gpt-5` does not "
        "exist or you do not have access to it."
    )


def test_an_overloaded_model_gets_the_nodes_retries_before_its_fallback(tmp_path: Path) -> None:
    cassette = (
        "nodes:\n  implement:\n    - {error: Overloaded, status_code: 529}\n    - {error: Overloaded, status_code: 529}\n"
        "    - Done.\n  review: [Looks good.]\n"
    )
    root, _ = project(tmp_path, cassette, node_attrs=", max_retries=1, retry_initial_delay=0")
    result = orchestra("run", "p.dot", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    document = status(root)
    implement = next(node for node in document["nodes"] if node["id"] == "implement")
    assert implement["attempts"] == 2
    implemented, reviewed = of_type(document, "AgentTurn")
    assert (implemented["model"], implemented["fallback_reason"]) == (
        "gpt-5", "scripted claude-opus-4: unavailable after the node's retries (HTTP 529): Overloaded"
    )
    assert (reviewed["model"], reviewed["requested_model"]) == ("claude-opus-4", None)  # overload lasts one node
    [failover] = of_type(document, "ModelFailover")
    assert failover["cause"] == "unavailable"


@pytest.mark.parametrize(
    ("models", "key", "detail"),
    [
        ("{worker: {model: a, fallbacks: [cheap]}, cheap: {model: b, fallbacks: [worker]}}",
         "providers.scripted.models.worker.fallbacks[0]",
         "the fallbacks go round in a cycle: scripted:worker -> scripted:cheap -> scripted:worker"),
        ("{worker: {model: a, fallbacks: []}}", "providers.scripted.models.worker.fallbacks", "an empty list"),
        ("{worker: {model: a, fallbacks: ['opnai:gpt-5']}}", "providers.scripted.models.worker.fallbacks[0]",
         "no provider named 'opnai' (did you mean openai?)"),
    ],
)  # fmt: skip
def test_bad_fallbacks_stop_the_run_before_a_session_exists(tmp_path: Path, models: str, key: str, detail: str) -> None:
    config = f"providers:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\n    models: {models}\n"
    root, _ = project(tmp_path, CASSETTE, config=config)
    result = orchestra("run", "p.dot", cwd=root)
    assert result.returncode == 2
    assert f"{root / 'orchestra.yaml'}:5: {key}: {detail}" in result.stderr
    assert not (root / ".orchestra" / "orchestra.db").exists()


def test_a_fallback_providers_missing_key_stops_the_run_before_a_session_exists(tmp_path: Path) -> None:
    config = CONFIG.replace('"backup:gpt-5"', '"openai:gpt-5"')
    root, _ = project(tmp_path, CASSETTE, config=config)
    result = orchestra("run", "p.dot", cwd=root)
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr
    assert not (root / ".orchestra" / "orchestra.db").exists()
