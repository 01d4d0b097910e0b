"""Other runners' pipelines run here unchanged (issue 31, item 3): their dialects compile with warnings that name
the spec's spelling (`orchestra compile`, text and `--json`), `orchestra run` shows each once on stderr and runs,
and what Orchestra cannot honour is refused by `compile`, never by the run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.attractor_compat.simulated_runs import checkpoint, node_outcome, run_pipeline
from tests.support.orchestra_project import orchestra

ELSEWHERE = """digraph elsewhere {
    graph [goal="Review a change", model_stylesheet="* { model: claude-sonnet-4-5; }"]
    start   [shape=Mdiamond]
    exit    [shape=Msquare]
    fan     [shape=component, join_policy=all_success]
    style   [prompt="Review the style", retry_preset=standard]
    logic   [prompt="Review the logic"]
    join    [shape=tripleoctagon]
    verdict [prompt="Decide", goal_gate="outcome=success", retry_target=fan, max_visits=2]
    start -> fan
    fan -> style -> join
    fan -> logic -> join
    join -> verdict
    verdict -> exit    [weight=2.0]
    verdict -> fan     [condition="outcome=fail"]
}
"""
DIALECTS = {
    ("attribute_dialect", None, None): "model_stylesheet line 1, column 5: `model:` is another runner's spelling",
    ("attribute_dialect", None, ("verdict", "exit")): "weight=2.0 is a decimal, where the spec's weight is an integer",
    ("attribute_dialect", "fan", None): "join_policy=all_success is read as join_policy=quorum, quorum_ratio=1",
    ("attribute_dialect", "style", None): "retry_preset=standard is another runner's name for retry_policy",
    ("attribute_dialect", "verdict", None): "goal_gate='outcome=success' is a condition",
}


def test_compile_reads_other_runners_spellings_with_warnings_naming_the_spec_s(tmp_path: Path) -> None:
    (tmp_path / "pipeline.dot").write_text(ELSEWHERE, encoding="utf-8")
    compiled = orchestra("compile", "pipeline.dot", "--json", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    document = json.loads(compiled.stdout)
    assert document["valid"] is True
    found = {
        (d["rule"], d["node_id"], tuple(d["edge"]) if d["edge"] else None): d for d in document["diagnostics"]
    }
    assert set(found) == set(DIALECTS)
    for key, start in DIALECTS.items():
        assert found[key]["severity"] == "warning" and found[key]["message"].startswith(start), found[key]
        assert found[key]["fix"]
    assert set(found[("attribute_dialect", None, None)]) == {"rule", "severity", "message", "node_id", "edge", "fix"}
    nodes = {node["id"]: node for node in document["nodes"]}
    assert nodes["style"]["attrs"]["llm_model"] == "claude-sonnet-4-5"  # the stylesheet applied as llm_model

    text = orchestra("compile", "pipeline.dot", cwd=tmp_path)
    assert text.returncode == 0 and "attribute_dialect" in text.stdout and "5 warnings" in text.stdout


def test_run_shows_each_warning_once_on_stderr_and_runs(tmp_path: Path) -> None:
    result, logs = run_pipeline(tmp_path, ELSEWHERE)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("[attribute_dialect]") == 5
    assert result.stderr.count("`model:` is another runner's spelling") == 1
    assert node_outcome(checkpoint(logs), "fan")["status"] == "success"
    assert checkpoint(logs)["completed_nodes"][-2:] == ["verdict", "exit"]


REFUSED = """digraph refused {
    start [shape=Mdiamond]
    exit  [shape=Msquare]
    fan   [shape=component, join_policy=quorum]
    a [prompt="a"]; b [prompt="b"]
    join  [shape=tripleoctagon]
    start -> fan
    fan -> a -> join
    fan -> b -> join
    join -> exit
}
"""


def test_a_join_policy_orchestra_cannot_honour_is_refused_by_compile_and_run_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "pipeline.dot").write_text(REFUSED, encoding="utf-8")
    compiled = orchestra("compile", "pipeline.dot", "--json", cwd=tmp_path)
    assert compiled.returncode == 1
    [error] = [d for d in json.loads(compiled.stdout)["diagnostics"] if d["severity"] == "error"]
    assert (error["rule"], error["node_id"]) == ("attribute_value", "fan")
    assert error["message"].startswith("join_policy=quorum needs quorum_ratio")

    result, logs = run_pipeline(tmp_path, REFUSED)
    assert result.returncode == 1
    assert "error [attribute_value] node fan: join_policy=quorum needs quorum_ratio" in result.stderr
    assert "nothing was run" in result.stderr and not logs.exists()
