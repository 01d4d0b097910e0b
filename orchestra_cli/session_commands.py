"""`orchestra status` and `orchestra attach`: read the session store without writing to it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from orchestra_cli.errors import EXIT_BUDGET_EXCEEDED, EXIT_FAILED, EXIT_OK, fail, user_errors

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

    @property
    def container(self) -> Any:
        """The composition root the store was opened from."""
        return self._container

    @property
    def locks(self) -> Any:
        """The runners' session locks: a session recorded as running whose lock is free has no runner."""
        return self._container.session_locks()

    def require(self, session: str) -> Any:
        """The store, or exit 2 when there is none yet (so no session can be in it)."""
        if self.store is None:
            raise fail(f"no session {session!r}: there is no session store at {self.location} yet")
        return self.store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


DEFAULT_SESSIONS_LISTED = 20
DEFAULT_PAGE_TURNS = 50


def status(
    session: str | None,
    *,
    json_output: bool,
    config: Path | None,
    limit: int | None,
    all_sessions: bool,
    after: str | None = None,
) -> int:
    """`orchestra status [SESSION]`; returns the exit code."""
    from orchestra_adapters.collector import collector_off

    check_status_options(session, limit, after, all_sessions=all_sessions)
    # A long session's summary is 100,000s of small objects without cycles: collecting over them again and
    # again as they are made cost nearly half of `status`'s time.
    with user_errors(), collector_off():
        reader = StoreReader(config)
        try:
            if session is None:
                _list_sessions(reader, json_output, limit or DEFAULT_SESSIONS_LISTED, all_sessions)
            else:
                _show_session(reader, session, json_output, all_sessions, limit, after)
            return EXIT_OK
        finally:
            reader.close()


def check_status_options(session: str | None, limit: int | None, after: str | None, *, all_sessions: bool) -> None:
    """Refuse `status` options that do not go together.

    Raises:
        typer.Exit: A limit below 1, --after without a session, --all with a page (after printing why).
    """
    if limit is not None and limit < 1:
        raise fail("--limit must be at least 1")
    if session is None and after is not None:
        raise fail("--after needs a SESSION: it pages the turns of one session")
    if session is not None and all_sessions and (limit is not None or after is not None):
        raise fail("--all shows every turn of a session: give it without --limit and --after")


def _list_sessions(reader: StoreReader, json_output: bool, limit: int, all_sessions: bool) -> None:
    from orchestra_cli.fleet_commands import fleet_view, print_fleet_view
    from orchestra_cli.output import print_json
    from orchestra_cli.session_views import print_session_rows
    from orchestra_core.session.listing import list_session_rows

    rows = (
        list_session_rows(reader.store, limit=limit, include_branches=all_sessions, locks=reader.locks)
        if reader.store
        else []
    )
    fleet = fleet_view(reader.container, [row.to_json()["session_id"] for row in rows])
    if json_output:
        print_json({"sessions": [row.to_json() for row in rows], **({"fleet": fleet} if fleet else {})})
    else:
        print_session_rows(rows, location=reader.location or reader.store.location, limit=limit)
        if fleet:
            print_fleet_view(fleet)


def _show_session(
    reader: StoreReader, session: str, json_output: bool, all_sessions: bool, limit: int | None, after: str | None
) -> None:
    from orchestra_cli.output import print_json
    from orchestra_cli.session_views import (
        SHOWN_AGENT_TURNS,
        SHOWN_CHECKPOINTS,
        SHOWN_NODE_RUNS,
        print_session_page,
        print_session_summary,
    )

    store = reader.require(session)
    if after is not None or (json_output and limit is not None):
        from orchestra_core.session.pages import session_page

        page = session_page(store, session, reader.locks, limit=limit or DEFAULT_PAGE_TURNS, after=after)
        if json_output:
            print_json(page.to_json(), compact=True)
        else:
            print_session_page(page)
        return
    if json_output or all_sessions:
        from orchestra_core.session.summary import session_summary

        summary = session_summary(store, session, reader.locks)
    else:
        # The text view shows the session's recent end: only that is read (and the counts, from the head).
        from orchestra_core.session.recent import RecentLimits, recent_session_summary

        shown = limit or SHOWN_AGENT_TURNS
        limits = RecentLimits(max(shown, SHOWN_NODE_RUNS), shown, SHOWN_CHECKPOINTS)
        summary = recent_session_summary(store, session, reader.locks, limits=limits)
    if json_output:
        print_json(summary.to_json(), compact=True)
    else:
        print_session_summary(summary, all_turns=all_sessions, shown_turns=limit or SHOWN_AGENT_TURNS)


def attach(session: str, *, json_output: bool, config: Path | None, interval: float) -> int:
    """`orchestra attach SESSION`: print turns as they land until the run ends; returns the exit code.

    Exit code 0 when the run succeeded (or on Ctrl-C, or when the output pipe closed), 1 when it failed
    or was interrupted. A session recorded as running whose runner is gone (its lock is free: killed, or its
    machine stopped) is printed as far as it was recorded; an interrupted session ends with a line saying so and
    what `orchestra resume` does with it.
    """
    from orchestra_core.model.records import LifecycleEvent
    from orchestra_core.ports.session_store import SessionStatus
    from orchestra_core.session.trace import SessionTrace

    if interval <= 0:
        raise fail("--interval must be a positive number of seconds")
    with user_errors():
        reader = StoreReader(config)
        try:
            store = reader.require(session)
            trace = SessionTrace(store, session)
            alive = _RunnerWatch(store, trace.info, reader.locks)
            if not json_output and trace.info.status in (SessionStatus.NEW, SessionStatus.RUNNING) and alive():
                print(
                    f"following session {trace.info.session_id} ({trace.info.metadata.pipeline}); Ctrl-C to stop",
                    file=sys.stderr, flush=True,
                )
            pause = None if json_output else _attach_pause(reader, trace.info.session_id)
            if not _follow(trace, _printer(json_output), interval, alive, pause):
                return EXIT_OK
            if not trace.ended:
                status = alive.status()
                if status is SessionStatus.SUCCESS:
                    return EXIT_OK
                if status is SessionStatus.INTERRUPTED:
                    _say_interrupted(store, trace.info.session_id, json_output, gone=True)
                return EXIT_FAILED
            if trace.last_event is LifecycleEvent.INTERRUPTED:  # stopped (Ctrl-C): what resume does with it
                _say_interrupted(store, trace.info.session_id, json_output, gone=False)
        except KeyboardInterrupt:
            return EXIT_OK
        finally:
            with suppress(Exception):
                reader.close()
    if trace.last_event is LifecycleEvent.BUDGET_EXCEEDED:  # stopped by a budget: resumable with a higher one
        return EXIT_BUDGET_EXCEEDED
    return EXIT_OK if trace.last_event is LifecycleEvent.COMPLETED else EXIT_FAILED


class _RunnerWatch:
    """Whether a runner may still record into the session: False once it ended, or its runner is gone (its status
    is running, or new, and the lock its runner took is free), or it is a branch of a run that ended or whose runner
    is gone. A `new` session no runner took yet (queued in a fleet) is waited for."""

    def __init__(self, store: Any, info: Any, locks: Any) -> None:
        from orchestra_core.session.liveness import root_info

        self._store, self._locks = store, locks
        self._root = root_info(store, info)

    def status(self) -> Any:
        """The live status of the run the session belongs to."""
        from orchestra_core.session.liveness import live_info

        return live_info(self._store, self._store.get_session(self._root.session_id), self._locks).status

    def __call__(self) -> bool:
        from orchestra_core.ports.session_store import SessionStatus

        waiting = (SessionStatus.RUNNING, SessionStatus.NEW)
        return self._store.get_session(self._root.session_id).status in waiting and self.status() in waiting


def _say_interrupted(store: Any, session_id: str, json_output: bool, *, gone: bool) -> None:
    """The last line: the session was interrupted (`gone`: its runner died without recording it), and what
    `orchestra resume` does with it, in the words `status` and `cleanup` use."""
    from orchestra_core.session.restart import resume_advice

    how = ": its runner is gone (killed, or its machine stopped) without recording an end" if gone else ""
    message = f"session {session_id} was interrupted{how}; {resume_advice(store, session_id)}"
    with suppress(BrokenPipeError):
        if json_output:
            import json

            print(json.dumps({"event": "interrupted", "session_id": session_id, "error": message}), flush=True)
        else:
            print(message, file=sys.stderr, flush=True)


def _attach_pause(reader: StoreReader, session_id: str) -> Callable[[float], None] | None:
    """Between polls, attach shows what the run waits for and sends the lines typed (orchestra_cli/attach_chat.py)."""
    from orchestra_cli.attach_chat import responder_for
    from orchestra_core.model.layout import ProjectLayout

    responder = responder_for(ProjectLayout(reader.container.project_root()).state_dir, session_id)
    return responder.wait if responder is not None else None


def _follow(
    trace: Any,
    emit: Callable[[Any], None],
    interval: float,
    alive: Callable[[], bool],
    pause: Callable[[float], None] | None = None,
) -> bool:
    """Print every turn, then poll for new ones until the main line's lifecycle says the run ended, or no
    runner is left to record into it (then once more, for what it recorded before it went). `pause` waits
    between polls (default: sleep).

    Returns False when the output went away (a closed pipe) before the end.
    """
    while True:
        running = alive()
        try:
            for view in trace.read():
                emit(view)
        except BrokenPipeError:
            _silence_stdout()
            return False
        if trace.ended or not running:
            return True
        (pause or time.sleep)(interval)


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
