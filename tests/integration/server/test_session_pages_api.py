"""The server's session page and event stream of a long recorded session: the latest turns first, earlier ones a
page at a time, the stream from a given turn; none of it reads more turns for a longer session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.session.turn_view import TurnView
from tests.support.long_sessions import build_long_session
from tests.support.server import LOCAL, make_project, sse_messages


def _client(root: Path, turns: int) -> Iterator[tuple[TestClient, str]]:
    project = make_project(root)
    with SqliteSessionStore(project / ".orchestra" / "orchestra.db") as store:
        session = build_long_session(store, turns)
    service = PipelineService(cwd=project)
    try:
        with TestClient(create_app(service), base_url=LOCAL) as client:
            yield client, session
    finally:
        service.close()


@pytest.fixture
def short(tmp_path: Path) -> Iterator[tuple[TestClient, str]]:
    yield from _client(tmp_path / "short", 400)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the turns decoded into views."""
    count = [0]
    original = TurnView.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[TurnView], *args: Any, **kwargs: Any) -> TurnView:
        count[0] += 1
        return original(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(TurnView, "of", classmethod(counting))
    return count


def _ids(document: dict[str, Any]) -> list[str]:
    return [turn["turn_id"] for turn in document["turns"]]


def test_the_latest_page_then_earlier_pages_hold_every_turn(short: tuple[TestClient, str]) -> None:
    client, session = short
    full = client.get(f"/sessions/{session}").json()
    assert "has_more" not in full  # without a query, the document is today's
    page = client.get(f"/sessions/{session}", params={"last": 10}).json()
    assert (
        sum(turn["type"].endswith("AgentTurn") for turn in page["turns"]) >= 10
    )  # and the last 10 node runs
    assert page["tokens"] == full["tokens"] and page["status"] == full["status"]
    seen = _ids(page)
    while page["has_earlier"]:
        assert page["next_before"] == seen[0]
        page = client.get(f"/sessions/{session}", params={"last": 60, "before": page["next_before"]}).json()
        assert page["has_more"] and len(page["turns"]) <= 60
        seen = _ids(page) + seen
    assert page["next_before"] is None
    assert seen == _ids(full)


def test_forward_pages_match_the_cli_document(short: tuple[TestClient, str]) -> None:
    client, session = short
    full = _ids(client.get(f"/sessions/{session}").json())
    page = client.get(f"/sessions/{session}", params={"limit": 25, "after": full[99]}).json()
    assert _ids(page) == full[100:125] and page["has_more"] and page["next_after"] == full[124]
    assert page["has_earlier"] and page["next_before"] == full[100]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": "0"}, "limit '0' must be a whole number"),
        ({"last": "abc"}, "last 'abc' must be a whole number"),
        ({"limit": "5000"}, "from 1 to 1000"),
        ({"after": "abc"}, "turn 'abc' is not a turn of session"),
        ({"last": "5", "before": "987654321"}, "turn '987654321' is not a turn of session"),
        ({"before": "3"}, "before=TURN goes with last=N"),
        ({"last": "5", "limit": "5"}, "not both"),
    ],
)
def test_bad_page_queries_are_refused(
    short: tuple[TestClient, str], params: dict[str, str], message: str
) -> None:
    client, session = short
    response = client.get(f"/sessions/{session}", params=params)
    assert response.status_code == 400 and message in response.json()["error"]


def test_a_stream_starts_after_the_turn_it_is_given(short: tuple[TestClient, str]) -> None:
    client, session = short
    full = _ids(client.get(f"/sessions/{session}").json())
    for how in ({"headers": {"Last-Event-ID": full[-4]}}, {"params": {"after": full[-4]}}):
        with client.stream("GET", f"/pipelines/{session}/events", **how) as response:  # type: ignore[arg-type]
            messages = list(sse_messages(response.iter_lines()))
        assert [m["id"] for m in messages[:-1]] == full[-3:] and messages[-1]["event"] == "end"
    refused = client.get(f"/pipelines/{session}/events", headers={"Last-Event-ID": "987654321"})
    assert refused.status_code == 400 and "is not a turn of session" in refused.json()["error"]


def test_the_page_and_the_stream_of_a_long_session_decode_a_bounded_number_of_turns(
    tmp_path: Path, decoded: list[int]
) -> None:
    for client, session in _client(tmp_path / "long", 8_000):
        head = int(client.get(f"/sessions/{session}", params={"last": 1}).json()["turns"][-1]["turn_id"])
        work = {}
        for name, params in {
            "latest": {"last": 20},
            "earlier": {"last": 20, "before": str(head - 4_000)},
            "after": {"limit": 20, "after": str(head - 4_000)},
        }.items():
            decoded[0] = 0
            assert client.get(f"/sessions/{session}", params=params).status_code == 200
            work[name] = decoded[0]
        decoded[0] = 0
        with client.stream(
            "GET", f"/pipelines/{session}/events", headers={"Last-Event-ID": str(head - 5)}
        ) as response:
            assert len(list(sse_messages(response.iter_lines()))) == 6
        work["stream"] = decoded[0]
        # The page reads its turns and the header's recent end (back to the latest workspace snapshot): a few
        # hundred at most, where reading the session whole decodes all 8,000.
        assert max(work.values()) < 400, work
