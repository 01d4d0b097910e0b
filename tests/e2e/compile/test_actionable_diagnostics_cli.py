"""Diagnostics a person can act on, through the CLI: mistyped attributes and edge ends, unknown backends
in orchestra.yaml, each location named once, every config problem on its own line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.orchestra_project import orchestra, write_files

PIPELINE = """digraph review {
  start  [shape=Mdiamond]
  exit   [shape=Msquare]
  review [promt="Review the diff"]
  fix    [prompt="Fix it", agent.mode=autonomous]
  lonely [prompt="never runs"]
  start -> review [lable="go"]
  review -> fixx
  fixx -> exit
  start -> fix -> exit
}
"""


def test_compile_names_typos_with_what_was_meant_and_each_location_once(tmp_path: Path) -> None:
    write_files(tmp_path, {"review.dot": PIPELINE})
    result = orchestra("compile", "--json", "review.dot", cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the orphan `lonely` is an error, the typos are warnings
    found = {
        (d["rule"], d["node_id"], tuple(d["edge"] or ())): d for d in json.loads(result.stdout)["diagnostics"]
    }
    promt = found[("attribute_known", "review", ())]
    assert (promt["severity"], promt["message"]) == (
        "warning",
        "unknown attribute 'promt' is ignored; did you mean 'prompt'?",
    )
    assert found[("attribute_known", None, ("start", "review"))]["message"].endswith("did you mean 'label'?")
    fixx = found[("edge_target_declared", None, ("review", "fixx"))]
    assert (
        fixx["message"].startswith("fixx is declared nowhere but in edges")
        and "did you mean 'fix'?" in fixx["message"]
    )
    text = orchestra("compile", "review.dot", cwd=tmp_path).stdout
    for line in text.splitlines():
        words = line.split()
        if len(words) > 4 and words[2] == "node":
            assert f"node {words[3]}" not in " ".join(words[4:]), line  # "node a ... node a: ..." never
    assert "unknown attribute 'promt' is ignored; did you mean 'prompt'?" in text


def test_unknown_backends_in_orchestra_yaml_are_errors_in_compile_and_doctor(tmp_path: Path) -> None:
    plain = (
        'digraph review { start [shape=Mdiamond]; exit [shape=Msquare]; a [prompt="A"]; start -> a -> exit }'
    )
    write_files(
        tmp_path,
        {
            "orchestra.yaml": "backend: codx\npipelines:\n  review:\n    backend: langgraf\n",
            "review.dot": plain,
        },
    )
    result = orchestra("compile", "review.dot", cwd=tmp_path)
    assert result.returncode == 1
    assert "orchestra.yaml backend: 'codx' is not a backend (did you mean 'codex'?)" in result.stdout
    assert (
        "orchestra.yaml pipelines.review.backend: 'langgraf' is not a backend (did you mean 'langgraph'?)"
        in (result.stdout)
    )
    doctor = orchestra("doctor", "--json", cwd=tmp_path)
    assert doctor.returncode == 1
    checks = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "backends"]
    assert [c["status"] for c in checks] == ["error", "error"]


CONFIG = "bakend: x\nstorage:\n  backend: mysql\n  pathh: x\nsandbox:\n  kind: nope\n"


def test_every_config_problem_is_its_own_line(tmp_path: Path) -> None:
    write_files(tmp_path, {"orchestra.yaml": CONFIG, "p.dot": "digraph p { start [shape=Mdiamond] }"})
    config = tmp_path / "orchestra.yaml"
    result = orchestra("compile", "p.dot", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"orchestra: error: 4 problems in {config}:",
        f"  {config}:1: bakend: unknown key (did you mean backend?)",
        f"  {config}:3: storage.backend: expected one of sqlite, cxdb, postgres, got a string ('mysql')",
        f"  {config}:4: storage.pathh: unknown key (did you mean path?)",
        f"  {config}:6: sandbox.kind: expected one of none, bubblewrap, got a string ('nope')",
    ]
    document = json.loads(orchestra("compile", "--json", "p.dot", cwd=tmp_path).stdout)["error"]
    assert document["problems"] == [line.strip() for line in result.stderr.splitlines()[1:]]
    assert (document["exit_code"], document["line"], document["key"]) == (2, 1, "bakend")
    doctor = json.loads(orchestra("doctor", "--json", cwd=tmp_path).stdout)
    lines = [c["detail"] for c in doctor["checks"] if c["name"] == "config"]
    assert lines == document["problems"]


def test_a_single_config_problem_stays_one_line(tmp_path: Path) -> None:
    write_files(tmp_path, {"orchestra.yaml": "bakend: x\n", "p.dot": "digraph p { start [shape=Mdiamond] }"})
    result = orchestra("compile", "p.dot", cwd=tmp_path)
    assert result.stderr.splitlines() == [
        f"orchestra: error: {tmp_path / 'orchestra.yaml'}:1: bakend: unknown key (did you mean backend?)"
    ]
