"""A run's event log hands its events out a page at a time, so a stream of a long run starts as fast as a short one's."""

from __future__ import annotations

from orchestra_adapters.server.event_log import EventLog


def test_events_come_a_page_at_a_time_and_the_end_after_the_last_page() -> None:
    log = EventLog()
    for number in range(10):
        log.append({"kind": "E", "n": number})
    log.close()
    first, finished = log.after(0, limit=4)
    assert [number for number, _event in first] == [1, 2, 3, 4] and not finished
    rest, finished = log.after(8, limit=4)
    assert [event["n"] for _number, event in rest] == [8, 9] and not finished
    assert log.after(10, limit=4) == ([], True)
    everything, _ = log.after(0)
    assert len(everything) == 10


def activity(node: str, text: str, branch: str | None = None) -> dict[str, object]:
    return {"kind": "AgentActivity", "node_id": node, "branch": branch, "activity": "text", "text": text}


def test_live_activity_keeps_a_nodes_newest_text_and_the_last_ended_nodes_ids_unchanged() -> None:
    from orchestra_adapters.server.event_log import is_dropped

    log = EventLog(live_bytes=1000, keep_ended=1)
    log.append({"kind": "StageStarted", "node_id": "a"})
    for number in range(10):
        log.append(activity("a", f"{number}" * 300))
    log.append(activity("b", "other", branch="fan:1"))
    kept = [event["text"][0] for _n, event in log.after(0)[0] if not is_dropped(event) and event.get("text")]
    assert kept == ["8", "9", "o"]  # 1,000 bytes of node a's (each counts its text and 200), all of b's
    log.append({"kind": "StageCompleted", "node_id": "a", "branch": None})  # kept: the last node that ended

    def live() -> list[str]:
        events = [event for _n, event in log.after(0)[0] if event.get("kind") == "AgentActivity"]
        return [event["node_id"] for event in events if not is_dropped(event)]

    assert live() == ["a", "a", "b"]
    log.append({"kind": "StageFailed", "node_id": "b", "branch": "fan:1"})  # b ended after a: a's goes
    assert live() == ["b"]
    events, _ = log.after(0)
    assert [number for number, _event in events] == list(range(1, 15))  # the ids a reconnection counts on
