"""Where the time and money went, in the browser: the session's totals at the top, per node its runs, time, tokens
and cost in a table and as a badge on the graph, and a Gantt timeline with a lane per node and parallel branch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.orchestra_project import run_json
from tests.support.server import LiveServer
from tests.support.traced_project import PIPELINE, traced_project

# $1,000 per million tokens: a scripted turn of ~1,100 tokens costs about a dollar.
PRICING = "pricing:\n  scripted: {input: 1000, output: 1000}\n"
HOSTILE_LABEL = "<img src=x onerror=window.pwned=1>"


@pytest.fixture
def priced(tmp_path: Path) -> Iterator[tuple[LiveServer, str, Path]]:
    project, _repo = traced_project(tmp_path)
    with (project / "orchestra.yaml").open("a", encoding="utf-8") as config:
        config.write(PRICING)
    (project / "traced.dot").write_text(
        PIPELINE.replace('plan [prompt=', f'plan [label="{HOSTILE_LABEL}", prompt='), encoding="utf-8"
    )
    session_id = run_json("run", "traced.dot", cwd=project)["session_id"]
    server = LiveServer(project)
    yield server, session_id, project
    server.stop()


def money(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_totals_per_node_figures_badges_and_a_timeline(priced: tuple[LiveServer, str, Path], page: Any) -> None:
    server, session_id, project = priced
    status = run_json("status", session_id, cwd=project)  # the CLI's own accounting, to compare with
    page.goto(f"{server.url}/view/{session_id}")
    page.wait_for_selector("#costs tbody tr[data-node='plan']")

    assert money(page.text_content('#totals [data-total="cost"] .total-value')) == pytest.approx(
        status["cost_usd"], abs=0.005
    )
    assert page.text_content('#totals [data-total="tokens"] .total-value') == f"{status['tokens']['total_tokens']:,}"
    rows = {
        row[0]: row[1:]
        for row in page.eval_on_selector_all(
            "#costs tbody tr", "rows => rows.map(r => [...r.children].map(c => c.textContent))"
        )
    }
    for node in status["nodes"]:
        if node["agent_turns"]:
            _status, runs, _time, turns, tokens, cost, _diff = rows[node["id"]]
            assert (int(runs), int(turns)) == (node["attempts"], node["agent_turns"])
            assert tokens == f"{node['tokens']['total_tokens']:,}"
            assert money(cost) == pytest.approx(node["cost_usd"], abs=0.005)
            assert node["cost_usd"] > 0.5 or node["tokens"]["total_tokens"] == 0  # a tool stage's turn is free
    assert set(rows) >= {"start", "plan", "build", "fan", "left", "right", "join", "exit"}

    plan = "#graph g.node[data-node='plan']"
    plan_node = next(node for node in status["nodes"] if node["id"] == "plan")
    figures = page.get_attribute(plan, "data-cost")
    assert f"{plan_node['tokens']['total_tokens']:,} tokens" in figures and "$" in figures
    assert money(page.text_content(f"{plan} text.cost-badge")) == pytest.approx(plan_node["cost_usd"], abs=0.005)
    assert figures in page.text_content(f"{plan} title")  # the tooltip
    assert page.text_content("#graph g.node[data-node='fan'] text.cost-badge").endswith(" s")  # no agent: its time

    lanes = page.eval_on_selector_all("#gantt .lane", "lanes => lanes.map(l => l.dataset.lane)")
    assert "fan:left / left" in lanes and "fan:right / right" in lanes and "plan" in lanes
    widths = page.eval_on_selector_all("#gantt .bar", "bars => bars.map(b => b.getBoundingClientRect().width)")
    assert all(width > 0 for width in widths)

    page.click("#costs tbody tr[data-node='left'] button[data-node-diff]")  # the node's changes, from its row
    page.wait_for_selector('#review[data-state="ready"][data-scope="node"]')
    assert page.text_content("#review-files .file-path") == "left.txt"
    assert page.query_selector_all("main img, main script") == []
    assert page.evaluate("window.pwned") is None


def test_a_running_session_fills_in_as_it_goes(priced: tuple[LiveServer, str, Path], page: Any) -> None:
    server, _session, _project = priced
    gated = server.submit("""digraph gated {
        start [shape=Mdiamond]; done [shape=Msquare]
        prepare [shape=parallelogram, tool_command="echo prepared"]
        review [shape=hexagon, label="Ship it?"]
        start -> prepare -> review
        review -> done [label="[S] Ship"]
    }""")
    page.goto(f"{server.url}/view/{gated}")
    page.wait_for_selector("#gantt .lane[data-lane='review'] .bar.status-running")
    page.click('#questions button[data-answer="S"]')
    page.wait_for_selector("#gantt .lane[data-lane='review'] .bar.status-success")
    page.wait_for_selector("#costs tbody tr[data-node='done']")
