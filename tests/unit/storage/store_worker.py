"""A separate process for the SQLite reliability tests: append in a loop, or hold the write lock.

    python store_worker.py append DB SESSION COUNT CHECKPOINT_EVERY   (COUNT 0: until killed)
    python store_worker.py lock DB SECONDS
    python store_worker.py open DB GO_FILE    (opens the store once GO_FILE exists)

`append` prints each turn id once its transaction committed; `lock` prints "locked" once it holds the lock.
"""

from __future__ import annotations

import itertools
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.records import CheckpointRecord
from orchestra_core.session import api


def append(db: str, session: str, count: int, checkpoint_every: int) -> None:
    store = SqliteSessionStore(db, busy_timeout_s=30)
    numbers = itertools.count(1) if count == 0 else range(1, count + 1)
    for n in numbers:
        if checkpoint_every and n % checkpoint_every == 0:
            turn = api.append_record(store, session, CheckpointRecord(f"node{n}", (f"node{n}",), {"n": n}))
        else:
            turn = store.append(session, "test.Event", 1, {1: n, 2: "x" * 200})
        print(turn.turn_id, flush=True)
    store.close()


def lock(db: str, seconds: float) -> None:
    connection = sqlite3.connect(db, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    time.sleep(seconds)
    connection.execute("ROLLBACK")


def open_when(db: str, go_file: str) -> None:
    while not Path(go_file).exists():
        time.sleep(0.001)
    SqliteSessionStore(db).close()
    print("opened", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "append":
        append(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "open":
        open_when(sys.argv[2], sys.argv[3])
    else:
        lock(sys.argv[2], float(sys.argv[3]))
