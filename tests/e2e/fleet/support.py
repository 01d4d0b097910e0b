"""A fleet on this machine for the tests: worker projects (each a "machine" with its own clone), a submitter,
real `orchestra worker` subprocesses, the servers of tests/support/fleet_servers.py and a file:// remote."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestra_adapters.storage.postgres.store import PostgresSessionStore
from tests.support.environment import hermetic_env
from tests.support.git_remote_repos import bare_remote
from tests.support.orchestra_project import ORCHESTRA, write_files


def fleet_yaml(dsn: str, broker: str, remote: Path | None, *, pickup: str = "1s", claim_after: str = "2s") -> str:
    """An orchestra.yaml for a fleet project (the scripted model; the repo through its remote)."""
    repos = (
        f"workspace:\n  repos:\n    project: {{path: repo, remote: '{remote.as_uri()}', push: on_checkpoint}}\n"
        if remote is not None
        else ""
    )
    return (
        "providers:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\nbackend: langgraph\n"
        f"storage: {{backend: postgres, dsn: '{dsn}'}}\n"
        f"dispatch: {{broker: '{broker}', pickup_interval: {pickup}, claim_after: {claim_after}}}\n" + repos
    )


class Fleet:
    """Projects sharing one database, one broker and one remote; workers started in their own process groups."""

    def __init__(
        self, root: Path, dsn: str, broker: str, files: dict[str, str], *, with_repo: bool = True, claim_after: str = "2s"
    ) -> None:
        self.root = root
        self.dsn = dsn
        self.remote = bare_remote(root / "remote.git", {"README.md": "hello\n"}) if with_repo else None
        (root / "home").mkdir(exist_ok=True)
        self.env = hermetic_env(root / "home")
        self.yaml = fleet_yaml(dsn, broker, self.remote, claim_after=claim_after)
        self.files = files
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.submitter = self.project("submitter")

    def project(self, name: str, yaml: str | None = None) -> Path:
        path = self.root / name
        write_files(path, {"orchestra.yaml": yaml or self.yaml, **self.files})
        return path

    def start_worker(
        self, name: str, *, concurrency: int = 2, yaml: str | None = None, queues: tuple[str, ...] = ()
    ) -> subprocess.Popen[bytes]:
        project = self.project(name, yaml)
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        serve = [argument for queue in queues for argument in ("--queue", queue)]
        process = subprocess.Popen(
            [str(ORCHESTRA), "worker", "--concurrency", str(concurrency), "--name", name, *serve],
            cwd=project, env={**self.env, "NO_COLOR": "1"}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.workers[name] = process
        return process

    def kill(self, name: str) -> None:
        """SIGKILL the worker's whole process group: a machine that vanished."""
        process = self.workers[name]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for process in self.workers.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def store(self) -> PostgresSessionStore:
        return PostgresSessionStore(self.dsn)


def wait_for(
    what: str, check: Callable[[], Any], timeout: float = 120.0, every: float = 0.1, explain: Callable[[], str] | None = None
) -> Any:
    """Poll `check` until it returns something truthy; fail naming `what` (and what `explain` says) after `timeout`
    seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}" + (f"\n{explain()}" if explain else ""))
        time.sleep(every)


def describe(store: Any, session: str, ledger: Any = None) -> str:
    """A failing test's account of a session: its records and its child sessions' (oldest first), and its ledger
    entries, one line each."""
    from orchestra_core.session.api import history
    from orchestra_core.session.codec import decode_record

    lines = []
    for line in [session, *(child.session_id for child in store.child_sessions(session))]:
        lines.append(f"-- session {line} ({store.get_session(line).status.value})")
        for turn in reversed(list(history(store, line))):
            lines.append(f"   {turn.turn_id}: {_summary(decode_record(turn))}")
    if ledger is not None:
        lines += [f"-- ledger {entry}" for entry in ledger.branches(session)]
    return "\n".join(lines)


def _summary(record: object) -> str:
    fields = ("event", "node_id", "turn_number", "git_sha", "branch_id", "branch_session_id", "branch_session_ids", "error")
    shown = {name: getattr(record, name) for name in fields if getattr(record, name, None) not in (None, "", ())}
    return f"{type(record).__name__} {shown}"[:300]
