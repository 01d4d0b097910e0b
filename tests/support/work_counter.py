"""Runs `orchestra ARGS...` in this process and counts what it does; the counts go to a JSON file.

`python work_counter.py OUT.json ARGS...`. Counted, for the regression guards of issue 16 (no timings):
- `files_opened` / `files_written`: files opened, and opened for writing (audit event `open`);
- `renames`: os.rename / os.replace calls (audit event `os.rename`);
- `unlinks`: os.unlink / os.remove calls (audit event `os.remove`);
- `fsyncs`: os.fsync calls;
- `subprocesses`: processes started (audit events `subprocess.Popen`, `os.posix_spawn`, `os.fork`, `os.exec`);
- `git_processes`: the `subprocess.Popen`s among them that start git;
- `store_transactions` / `store_statements`: SQLite transactions begun and SQL statements run, on every
  connection the process opens with sqlite3.connect (a trace callback on each);
- `bytes_written`: bytes given to os.write (the run directory's files) plus the length of every SQL statement
  with its parameters expanded (what the store is sent; blobs count as their hex text);
- `store_bytes`: the SQL statements' part of `bytes_written` alone;
- `checkpoint_writer_*`: the files opened and written, renames, fsyncs and bytes of the run directory's
  background checkpoint writer (thread `orchestra-checkpoint-writer`), apart from the counts above: how many
  checkpoints it writes depends on how fast the disk is, since it skips those a newer one replaced;
- `stage_writer_*`: the same for the run directory's background stage file writer (thread
  `orchestra-stage-writer`), which writes every stage file queued to it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from collections import Counter
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT
counts: Counter[str] = Counter()
_BACKGROUND_WRITERS = {"orchestra-checkpoint-writer": "checkpoint_writer_", "orchestra-stage-writer": "stage_writer_"}


def _key(name: str) -> str:
    """`name`, prefixed with the background writer's name on the run directory's writer threads."""
    return _BACKGROUND_WRITERS.get(threading.current_thread().name, "") + name


def _opened_for_writing(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(letter in mode for letter in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _on_statement(statement: str) -> None:
    counts["store_statements"] += 1
    counts["bytes_written"] += len(statement)
    counts["store_bytes"] += len(statement)
    if statement.lstrip().upper().startswith("BEGIN"):
        counts["store_transactions"] += 1


def _audit(event: str, arguments: tuple[Any, ...]) -> None:
    if event == "open":
        path, mode, flags = arguments
        if isinstance(path, int) or (isinstance(path, str | bytes) and os.path.isdir(path)):
            return
        counts[_key("files_opened")] += 1
        if _opened_for_writing(mode, flags):
            counts[_key("files_written")] += 1
    elif event == "os.rename":
        counts[_key("renames")] += 1
    elif event == "os.remove":
        counts[_key("unlinks")] += 1
    elif event in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec"):
        counts["subprocesses"] += 1
        if event == "subprocess.Popen" and _is_git(arguments[1]):
            counts["git_processes"] += 1


def _is_git(args: Any) -> bool:
    """Whether a Popen's arguments start a git command."""
    first = args if isinstance(args, str | bytes) else next(iter(args), "")
    return os.path.basename(os.fsdecode(first)) == "git"


def _counting(name: str, function: Any) -> Any:
    def counted(fd: int, *rest: Any) -> Any:
        result = function(fd, *rest)
        if name == "bytes_written":
            counts[_key(name)] += result
        else:
            counts[_key(name)] += 1
        return result

    return counted


def _traced(connect: Any) -> Any:
    def traced_connect(*arguments: Any, **options: Any) -> Any:
        connection = connect(*arguments, **options)
        connection.set_trace_callback(_on_statement)
        return connection

    return traced_connect


def main() -> None:
    out, arguments = sys.argv[1], sys.argv[2:]
    os.write = _counting("bytes_written", os.write)
    os.fsync = _counting("fsyncs", os.fsync)
    sqlite3.connect = _traced(sqlite3.connect)
    sys.addaudithook(_audit)
    sys.argv = ["orchestra", *arguments]
    from orchestra_cli.main import main as orchestra

    try:
        orchestra()
    finally:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump(dict(counts), handle)


if __name__ == "__main__":
    main()
