"""The background stage file writer: files written in order, a failure of any kind reported once by the next
call (never a dead thread that a flush would wait for)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from orchestra_adapters.filesystem.stage_file_writer import StageFileWriter
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
