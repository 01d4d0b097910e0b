"""The adversarial PR review example (examples/pr-review) as a test project: made by its setup.sh, run through
the `orchestra` CLI, read back from its store (SQLite or CXDB)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orchestra_core.ports.session_store import SessionStore, StoredTurn
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.support.orchestra_project import orchestra

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pr-review"
SETUP = EXAMPLE / "setup.sh"
PR_BRANCH = "feature/customer-search"
REPOS = ("backend", "frontend")


class ReviewProject:
    """A project made by `setup.sh DIR`, with the environment its `orchestra` commands run in."""

    def __init__(self, root: Path, env: Mapping[str, str], storage: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.env = dict(env)
        self.storage = dict(storage or {})

    @classmethod
    def create(cls, root: Path, env: Mapping[str, str], storage: Mapping[str, str] | None = None) -> ReviewProject:
        """Run setup.sh into `root`; with `storage`, the orchestra.yaml gets that `storage:` section."""
        made = subprocess.run([str(SETUP), str(root)], capture_output=True, text=True, env=dict(env), check=False)
        assert made.returncode == 0, made.stderr
        if storage:
            lines = "".join(f"  {key}: {value}\n" for key, value in storage.items())
            with (root / "orchestra.yaml").open("a", encoding="utf-8") as config:
                config.write(f"\nstorage:\n{lines}")
        return cls(root, env, storage)

    def cli(self, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return orchestra(*args, cwd=cwd or self.root, env=self.env, timeout=180)

    def json(self, *args: str | Path, cwd: Path | None = None) -> dict[str, Any]:
        """`orchestra ARGS --json`, expected to exit 0: its document."""
        result = self.cli(*args, "--json", cwd=cwd)
        assert result.returncode == 0, result.stderr + result.stdout
        return json.loads(result.stdout)

    def git(self, repo: str, *args: str) -> str:
        env = {**self.env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        done = subprocess.run(
            ["git", *args], cwd=self.root / repo, capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    @contextmanager
    def store(self) -> Iterator[SessionStore]:
        store: SessionStore
        if self.storage.get("backend") == "cxdb":
            from orchestra_adapters.storage.cxdb.store import CxdbSessionStore

            store = CxdbSessionStore(self.storage["addr"], self.storage["url"])
        else:
            from orchestra_adapters.storage.sqlite_store import SqliteSessionStore

            store = SqliteSessionStore(self.root / ".orchestra" / "orchestra.db")
        try:
            yield store
        finally:
            store.close()

    def records(self, session: str) -> list[tuple[StoredTurn, Any]]:
        """Every turn of the session's history with its record, oldest first."""
        with self.store() as store:
            turns = list(history(store, session))
        return [(turn, decode_record(turn)) for turn in reversed(turns)]

    def records_of(self, session: str, kind: type) -> list[tuple[StoredTurn, Any]]:
        return [(turn, record) for turn, record in self.records(session) if isinstance(record, kind)]
