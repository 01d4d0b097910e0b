"""The background stage file writer: files written in order, a failure of any kind reported once by the next
call (never a dead thread that a flush would wait for)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, cast

import pytest

from orchestra_adapters.filesystem import stage_file_writer
from orchestra_adapters.filesystem.stage_file_writer import MAX_PENDING, StageFileWriter
from orchestra_core.ports.run_directory import RunDirectoryError


def test_files_are_written_in_order_and_are_on_disk_after_flush(tmp_path: Path) -> None:
    writer = StageFileWriter()
    for number in range(20):
        writer.submit(str(tmp_path / "stage"), "response.md", f"{number}".encode())
    writer.flush()
    assert (tmp_path / "stage" / "response.md").read_text() == "19"
    assert not writer.is_queued(str(tmp_path / "stage" / "response.md"))


def test_an_unexpected_error_is_reported_once_and_the_writer_goes_on(tmp_path: Path) -> None:
    writer = StageFileWriter()
    writer.submit(str(tmp_path / "stage"), "bad.md", cast(Any, "text, not bytes"))  # a bug, not an OSError
    with pytest.raises(RunDirectoryError, match=r"bad\.md: cannot write the stage file"):
        writer.flush()
    writer.submit(str(tmp_path / "stage"), "good.md", b"fine")
    writer.flush()
    assert (tmp_path / "stage" / "good.md").read_bytes() == b"fine"


def test_an_engine_that_outruns_the_disk_waits_for_room_instead_of_queueing_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk_free = threading.Event()
    real_write = stage_file_writer.write_file

    def slow_disk(path: str, data: bytes) -> None:
        disk_free.wait()
        real_write(path, data)

    monkeypatch.setattr(stage_file_writer, "write_file", slow_disk)
    writer = StageFileWriter()
    for number in range(MAX_PENDING):
        writer.submit(str(tmp_path / f"stage{number % 7}"), f"{number}.md", b"x")
    one_more = threading.Thread(target=writer.submit, args=(str(tmp_path / "last"), "last.md", b"y"))
    one_more.start()
    one_more.join(0.3)
    assert one_more.is_alive()  # held while MAX_PENDING files wait for the disk
    disk_free.set()
    one_more.join(10)
    assert not one_more.is_alive()
    writer.flush()
    assert (tmp_path / "last" / "last.md").read_bytes() == b"y"
    assert sum(1 for _ in tmp_path.rglob("*.md")) == MAX_PENDING + 1
