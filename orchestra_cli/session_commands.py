"""`orchestra status` and `orchestra attach`: read the session store without writing to it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from orchestra_cli.errors import EXIT_FAILED, EXIT_OK, fail, user_errors

DEFAULT_POLL_INTERVAL_S = 0.2


class StoreReader:
    """The configured session store, opened only for reading: a SQLite store that does not exist yet is
    reported as empty instead of being created."""

    def __init__(self, config: Path | None) -> None:
        from orchestra_adapters.container import build_container
        from orchestra_cli.options import require_config_file

        require_config_file(config)
        self._container = build_container(config_path=config)
        self.location, exists = self._where()
        self.store: Any = self._container.session_store() if exists else None

    def _where(self) -> tuple[str, bool]:
        from orchestra_adapters.storage.factory import sqlite_path

        settings = self._container.settings()
        if settings.storage.backend != "sqlite":
            return "", True
        path = sqlite_path(settings.storage, self._container.project_root())
        return str(path), path.is_file()

    def require(self, session: str) -> Any:
        """The store, or exit 2 when there is none yet (so no session can be in it)."""
        if self.store is None:
            raise fail(f"no session {session!r}: there is no session store at {self.location} yet")
        return self.store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def status(session: str | None, *, json_output: bool, config: Path | None, limit: int, all_sessions: bool) -> int:
    """`orchestra status [SESSION]`; returns the exit code."""
    from orchestra_cli.output import print_json
    from orchestra_cli.session_views import print_session_rows, print_session_summary

    if limit < 1:
        raise fail("--limit must be at least 1")
    with user_errors():
        reader = StoreReader(config)
        try:
            if session is None:
                from orchestra_core.session.listing import list_session_rows

                rows = list_session_rows(reader.store, limit=limit, include_branches=all_sessions) if reader.store else []
                if json_output:
                    print_json({"sessions": [row.to_json() for row in rows]})
                else:
                    print_session_rows(rows, location=reader.location or reader.store.location, limit=limit)
                return EXIT_OK
            from orchestra_core.session.summary import session_summary

            summary = session_summary(reader.require(session), session)
            if json_output:
                print_json(summary.to_json())
            else:
                print_session_summary(summary)
            return EXIT_OK
        finally:
            reader.close()


def attach(session: str, *, json_output: bool, config: Path | None, interval: float) -> int:
    """`orchestra attach SESSION`: print turns as they land until the run ends; returns the exit code.

    Exit code 0 when the run succeeded (or on Ctrl-C, or when the output pipe closed), 1 when it failed
    or was interrupted.
    """
    from orchestra_core.model.records import LifecycleEvent
    from orchestra_core.ports.session_store import SessionStatus
    from orchestra_core.session.trace import SessionTrace

    if interval <= 0:
        raise fail("--interval must be a positive number of seconds")
    with user_errors():
        reader = StoreReader(config)
        try:
            trace = SessionTrace(reader.require(session), session)
            if not json_output and trace.info.status in (SessionStatus.NEW, SessionStatus.RUNNING):
                print(
                    f"following session {trace.info.session_id} ({trace.info.metadata.pipeline}); Ctrl-C to stop",
                    file=sys.stderr, flush=True,
                )
            if not _follow(trace, _printer(json_output), interval):
                return EXIT_OK
        except KeyboardInterrupt:
            return EXIT_OK
        finally:
            with suppress(Exception):
                reader.close()
    return EXIT_OK if trace.last_event is LifecycleEvent.COMPLETED else EXIT_FAILED


def _follow(trace: Any, emit: Callable[[Any], None], interval: float) -> bool:
    """Print every turn, then poll for new ones until the main line's lifecycle says the run ended.

    Returns False when the output went away (a closed pipe) before the end.
    """
    while True:
        try:
            for view in trace.read():
                emit(view)
        except BrokenPipeError:
            _silence_stdout()
            return False
        if trace.ended:
            return True
        time.sleep(interval)


def _silence_stdout() -> None:
    """The reader went away (`attach ... | head`): send what is still buffered nowhere, quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _printer(json_output: bool) -> Callable[[Any], None]:
    if json_output:
        import json

        def emit_json(view: Any) -> None:
            print(json.dumps(view.to_json(), ensure_ascii=False), flush=True)

        return emit_json
    from orchestra_cli.session_views import turn_line

    def emit_text(view: Any) -> None:
        line = turn_line(view)
        if line is not None:
            print(line, flush=True)

    return emit_text
