"""The database connection: where it is and what schema it has."""

import os
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS customers (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    active INTEGER NOT NULL DEFAULT 1
);
"""


def connect(path=None):
    """A connection to the shop database (SHOP_DB, or an in-memory database for tests)."""
    connection = sqlite3.connect(path or os.environ.get("SHOP_DB", ":memory:"))
    connection.row_factory = sqlite3.Row
    connection.executescript(SCHEMA)
    return connection
