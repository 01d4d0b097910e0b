"""The store's own page cache stays small: a long run's memory does not grow by SQLite's default 2 MB (issue 33)."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.storage.sqlite_schema import open_database


def test_every_store_connection_caches_at_most_512_kib_of_pages(tmp_path: Path) -> None:
    for _ in range(2):  # a new file, then an existing one
        connection = open_database(tmp_path / ".orchestra" / "orchestra.db", 5.0)
        try:
            (size,) = connection.execute("PRAGMA cache_size").fetchone()
        finally:
            connection.close()
        assert size == -512  # KiB; SQLite's default is -2000
