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
