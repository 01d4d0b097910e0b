"""read_text_file: regular files only, never blocking, within the limit, strict UTF-8 with the offset."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from orchestra_core.model.input_files import (
    KIB,
    MIB,
    InputFileError,
    InputFileMissing,
    check_regular_file,
    describe_size,
    read_text_file,
)


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("héllo\nworld\n", encoding="utf-8")
    assert read_text_file(path, limit=KIB) == "héllo\nworld\n"


def test_a_file_of_exactly_the_limit_is_accepted_and_one_byte_more_is_not(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 1000)
    assert len(read_text_file(path, limit=1000)) == 1000
    path.write_bytes(b"x" * 1001)
    with pytest.raises(InputFileError, match=r"a.txt: larger than the limit of 1000 bytes"):
        read_text_file(path, limit=1000)


def test_a_missing_file_is_its_own_error(tmp_path: Path) -> None:
    with pytest.raises(InputFileMissing, match=r"nope\.txt: file not found"):
        read_text_file(tmp_path / "nope.txt", limit=KIB)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="is a directory, not a regular file"):
        read_text_file(tmp_path, limit=KIB)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputFileError, match=r"pipe: is a FIFO \(named pipe\), not a regular file"):
        read_text_file(fifo, limit=KIB)
    assert time.monotonic() - started < 10  # blocking would never end; loose for loaded CI machines


def test_a_character_device_is_refused() -> None:
    with pytest.raises(InputFileError, match="/dev/zero: is a character device, not a regular file"):
        read_text_file("/dev/zero", limit=KIB)


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputFileError, match="is a socket"):
            check_regular_file(path)


def test_a_symlink_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("ok", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert read_text_file(tmp_path / "link.txt", limit=KIB) == "ok"


def test_bytes_that_are_not_utf8_are_named_with_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "a.dot"
    path.write_bytes(b"digraph G {\n  a [label=\"\xff\"]\n}\n")
    with pytest.raises(InputFileError) as caught:
        read_text_file(path, limit=KIB, display="a.dot")
    assert str(caught.value) == "a.dot:2: not UTF-8 text: byte 0xff at offset 24 (invalid start byte)"
    assert caught.value.line == 2 and caught.value.path == "a.dot"


def test_sizes_are_described_as_the_documentation_writes_them() -> None:
    assert describe_size(4 * MIB) == "4 MiB"
    assert describe_size(64 * KIB) == "64 KiB"
    assert describe_size(1000) == "1000 bytes"
