"""`GET /pipelines` (the launch page's listing) and the `budget` a submission may carry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from tests.support.server import LOCAL, TOOL_RUN, make_project, wait_until

SLOW = """digraph slow {
    start [shape=Mdiamond]; done [shape=Msquare]
    first [shape=parallelogram, tool_command="sleep 1.5"]
    second [shape=parallelogram, tool_command="echo second"]
    start -> first -> second -> done
}
"""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[PipelineService]:
    root = make_project(tmp_path / "project")
    (root / "slow.dot").write_text(SLOW, encoding="utf-8")
    (root / "bad.dot").write_text("digraph {", encoding="utf-8")
    (root / "link.dot").symlink_to(root / "slow.dot")
    service = PipelineService(cwd=root)
    yield service
    service.close()


def test_the_listing_names_each_pipeline_with_its_compile_result(service: PipelineService) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        listing = client.get("/pipelines").json()
    entries = {entry["path"]: entry for entry in listing["pipelines"]}
    assert sorted(entries) == ["bad.dot", "slow.dot"]  # a symbolic link is not followed
    assert entries["slow.dot"]["valid"] and entries["slow.dot"]["name"] == "slow"
    assert not entries["bad.dot"]["valid"] and entries["bad.dot"]["error"]
    assert "simulate" in listing["backends"] and entries["slow.dot"]["backend"] == "simulate"


def test_a_budget_given_with_the_run_stops_it(service: PipelineService) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        started = client.post("/pipelines", json={"path": "slow.dot", "budget": {"max_wall_time": "1"}})
        assert started.status_code == 201, started.text
        session_id = started.json()["id"]
        ended = wait_until(
            lambda: (s := client.get(f"/pipelines/{session_id}").json())["status"] != "running" and s, "the end"
        )
    assert ended["status"] == "budget_exceeded", ended
    assert "second" not in ended["completed_nodes"]


@pytest.mark.parametrize(
    ("budget", "message"),
    [("5", '"budget" must be'), ({"max_cost": "free"}, "budget max_cost"), ({"max_money": 5}, '"budget" must be')],
)
def test_a_bad_budget_is_refused(service: PipelineService, budget: object, message: str) -> None:
    with TestClient(create_app(service), base_url=LOCAL) as client:
        answer = client.post("/pipelines", json={"dot": TOOL_RUN, "budget": budget})
    assert answer.status_code == 400 and message in answer.json()["error"]
