"""Throwaway servers for the fleet's tests: `redis-server` on a free loopback port and a PostgreSQL cluster whose
only socket is a Unix socket in a temporary directory (Debian's packages, installed by `make install`).

PostgreSQL refuses to run as root, and CI runs as root: then `initdb` and `pg_ctl` run as the `postgres` user
through `runuser`. Both servers are stopped (and their files removed) when their fixture ends. Tests skip, saying
why, when the binaries are missing, and fail under CI=1 (where `make install` must have installed them).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_START_TIMEOUT_S = 30.0


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def postgres_bin_dir() -> Path | None:
    """The newest PostgreSQL's binaries under /usr/lib/postgresql/*/bin (Debian's layout), None when absent."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """`redis-server` on 127.0.0.1 at a free port, nothing persisted; `url` is its `redis://` address."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            _missing("redis-server is not installed: run make install (Debian's redis-server)")
        self.dir = Path(tempfile.mkdtemp(prefix="orchestra-redis-"))
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                str(binary), "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
                "--dir", str(self.dir), "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        self._wait_ready()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"redis-server exited at start: {error.strip()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {_START_TIMEOUT_S:.0f}s")

    def flush(self) -> None:
        """Empty every database (between tests sharing the server)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as conn:
            conn.sendall(b"FLUSHALL\r\n")
            conn.recv(16)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class PostgresCluster:
    """A PostgreSQL cluster in a temporary directory, reachable only through its Unix socket there.

    `dsn()` is the superuser's DSN for a database; `new_database()` creates a fresh one (each test its own).
    """

    def __init__(self) -> None:
        bin_dir = postgres_bin_dir()
        if bin_dir is None:
            _missing("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run make install")
        assert bin_dir is not None
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="orchestra-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.socket_dir.mkdir()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            if shutil.which("runuser") is None:
                _missing("PostgreSQL refuses to run as root and runuser is missing")
            shutil.chown(self.root, "postgres", "postgres")
            shutil.chown(self.socket_dir, "postgres", "postgres")
            self.root.chmod(0o755)
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8",
            "--locale=C",
        )  # fmt: skip
        options = (
            f"-k {self.socket_dir} -c listen_addresses='' -F -c max_connections=200 "
            "-c shared_buffers=16MB -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start")

    def _run(self, tool: str, *arguments: str) -> None:
        command = [str(self.bin_dir / tool), *arguments]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.root)
        if done.returncode != 0:
            log = self.root / "server.log"
            detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()} {detail}")

    def dsn(self, database: str = "postgres") -> str:
        """The superuser's DSN for `database` over the cluster's Unix socket."""
        return f"postgresql://postgres@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """A fresh, empty database; its DSN."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.dsn(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():  # pg_ctl failed: stop the postmaster ourselves
            with contextlib.suppress(Exception):
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    try:
        yield cluster
    finally:
        cluster.stop()
