"""WriteTracker with a capture: each write's content is taken when the tool records it, the last one counting."""

from __future__ import annotations

from orchestra_core.agents.tools import TurnWrites, WriteTracker
from orchestra_core.model.turn import FileVersion


def _capture(contents: dict[str, str]):  # type: ignore[no-untyped-def]
    def capture(repo: str, path: str) -> FileVersion | None:
        text = contents.get(f"{repo}:{path}")
        if text == "unreadable":
            raise OSError("gone")
        return FileVersion("100644", text) if text is not None else None

    return capture


def test_each_write_is_captured_when_recorded_and_the_last_write_of_a_file_counts() -> None:
    contents = {"app:a.py": "blob-a1"}
    tracker = WriteTracker(_capture(contents))
    tracker.record("app", "a.py")
    contents["app:a.py"] = "blob-a2"  # changed after the write was recorded: the capture keeps blob-a1
    tracker.record("app", "b.py")
    assert tracker.pending() == ["app:a.py", "app:b.py"]
    writes = tracker.flush_writes()
    assert writes.files == ("app:a.py", "app:b.py")
    assert writes.versions == {"app:a.py": FileVersion("100644", "blob-a1")}
    tracker.record("app", "a.py")
    tracker.record("app", "a.py")
    assert tracker.flush_writes().versions == {"app:a.py": FileVersion("100644", "blob-a2")}
    assert tracker.flush() == []


def test_a_capture_that_fails_leaves_the_file_to_be_read_when_committed() -> None:
    contents = {"app:a.py": "blob-a1"}
    tracker = WriteTracker(_capture(contents))
    tracker.record("app", "a.py")
    contents["app:a.py"] = "unreadable"
    tracker.record("app", "a.py")  # the later write could not be captured: the older capture must not stand
    writes = tracker.flush_writes()
    assert writes.files == ("app:a.py",) and writes.versions == {}


def test_without_a_capture_writes_are_paths_only() -> None:
    tracker = WriteTracker()
    tracker.record("app", "a.py")
    assert tracker.flush_writes() == TurnWrites(("app:a.py",))


def test_later_writes_replace_earlier_versions_when_joined() -> None:
    one = TurnWrites(("app:a.py", "app:b.py"), {"app:a.py": FileVersion("100644", "1"), "app:b.py": FileVersion("100644", "b")})
    two = TurnWrites(("app:c.py", "app:a.py"), {"app:a.py": FileVersion("100644", "3")})
    three = TurnWrites(("app:b.py",))  # b written again, not captured: read when committed
    joined = one + two + three
    assert joined.files == ("app:a.py", "app:b.py", "app:c.py")
    assert joined.versions == {"app:a.py": FileVersion("100644", "3")}
