"""FileRunDirectory's background checkpoint writer: coalescing, no torn file, errors surface, the thread ends."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from orchestra_adapters.filesystem import atomic
from orchestra_adapters.filesystem.run_directory import FileRunDirectory
from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.ports.run_directory import RunDirectoryError
from orchestra_core.testing.contracts.run_directory import checkpoint

WRITER = "orchestra-checkpoint-writer"


def writer_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == WRITER]


@pytest.fixture(autouse=True)
def _no_writer_left_from_earlier_tests() -> None:
    for thread in writer_threads():  # a directory another test left unclosed: its thread ends on its own
        thread.join(10)


class GatedReplace:
    """os.replace that waits for `release` on its first call, recording what it was asked to write."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.written: list[str] = []
        self._replace = os.replace

    def __call__(self, source: str, target: str) -> None:
        self.entered.set()
        assert self.release.wait(10)
        self.written.append(json.loads(Path(source).read_text())["current_node"])
        self._replace(source, target)


def test_pending_checkpoints_coalesce_to_the_newest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = GatedReplace()
    monkeypatch.setattr(atomic.os, "replace", gate)
    directory = FileRunDirectory(str(tmp_path / "run"))
    directory.save_checkpoint(checkpoint(current_node="n0"))
    assert gate.entered.wait(10)  # the writer is busy with n0; n1..n4 queue up behind it
    for index in range(1, 5):
        directory.save_checkpoint(checkpoint(current_node=f"n{index}"))
    gate.release.set()
    directory.close()
    assert gate.written == ["n0", "n4"]
    assert json.loads((tmp_path / "run" / "checkpoint.json").read_text())["current_node"] == "n4"
    assert not writer_threads()


def test_the_final_checkpoint_is_written_on_the_callers_thread_and_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    fsync = os.fsync

    def counted_fsync(fd: int) -> None:
        synced.append(fd)
        fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", counted_fsync)
    directory = FileRunDirectory(str(tmp_path / "run"))
    directory.save_checkpoint(checkpoint(current_node="plan"))
    assert not synced
    directory.save_checkpoint(checkpoint(current_node="ship", next_node=None, status=RunStatus.SUCCESS))
    assert len(synced) == 2  # the file, then its directory
    assert not writer_threads()
    assert json.loads((tmp_path / "run" / "checkpoint.json").read_text())["status"] == "success"


def test_a_failed_background_write_fails_the_next_save_naming_the_file(tmp_path: Path) -> None:
    root = tmp_path / "run"
    directory = FileRunDirectory(str(root))
    directory.save_checkpoint(checkpoint(current_node="plan"))
    directory.close()
    (root / "checkpoint.json").unlink()
    (root / "checkpoint.json").mkdir()  # a directory in the way: the rename fails
    directory.save_checkpoint(checkpoint(current_node="gate"))
    with pytest.raises(RunDirectoryError, match=r"checkpoint\.json: cannot write the checkpoint"):
        directory.close()
    directory.close()  # raised once
    directory.save_checkpoint(checkpoint(current_node="gate"))
    for thread in writer_threads():  # the background write has failed once the thread ended
        thread.join(10)
    with pytest.raises(RunDirectoryError, match=r"checkpoint\.json"):
        directory.save_checkpoint(checkpoint(current_node="ship"))
    assert not list(root.glob("checkpoint.json.tmp-*"))


def test_a_reader_polling_the_file_never_sees_a_torn_one(tmp_path: Path) -> None:
    root = tmp_path / "run"
    directory = FileRunDirectory(str(root))
    directory.save_checkpoint(checkpoint(current_node="n0"))
    directory.close()
    done = threading.Event()
    seen: list[str] = []
    failed: list[Exception] = []

    def poll() -> None:
        # A torn file's error is kept for the test: raised in this thread it would only be a warning.
        try:
            while not done.is_set():
                seen.append(json.loads((root / "checkpoint.json").read_text())["current_node"])
        except Exception as error:
            failed.append(error)

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for index in range(1, 300):
            directory.save_checkpoint(checkpoint(current_node=f"n{index}", logs=("x" * 5000,) * index))
        directory.close()
    finally:
        done.set()
        reader.join()
    assert not failed, f"the reader saw a torn checkpoint.json: {failed[0]!r}"
    assert seen and seen == sorted(seen, key=lambda node: int(node[1:]))
    assert json.loads((root / "checkpoint.json").read_text())["current_node"] == "n299"
