"""`orchestra run` (and `resume`, `replay`) on a host with a fleet configured: the session runs in the command's own
process, but the fleet knows it: it is in the ledger (the fleet view lists it, `orchestra cancel` stops it), its
parallel branches go to the workers, and no worker ever picks it up (the command is its runner)."""

from __future__ import annotations

import os
import socket
import threading
from contextlib import suppress
from typing import Any

from orchestra_adapters.dispatch.fleet import Fleet
from orchestra_adapters.dispatch.session_runner import CANCEL_REASON, watch_session
from orchestra_core.model.cancellation import Cancellation
from orchestra_core.model.records import LifecycleEvent, PipelineLifecycle
from orchestra_core.ports.fleet import SESSION_ORIGIN_RUN
from orchestra_core.runs.ports import FleetPorts
from orchestra_core.session.api import append_record


def command_runner_name() -> str:
    """How the ledger and the branches' entries name an `orchestra run` process."""
    return f"orchestra-run-{os.getpid()}@{socket.gethostname()}"


class FleetRun:
    """The fleet's side of one session run by a command: `ports()` for its branches, `start(run)` once the session
    is begun and locked, `end(run)` when it stopped (however)."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.name = command_runner_name()
        self.stop = Cancellation(CANCEL_REASON)
        self.cancelled = threading.Event()
        self._done: threading.Event | None = None

    def ports(self) -> FleetPorts | None:
        """What the run sends its branches with: the command runs branches of the default queue itself when no
        worker took them in time."""
        return self.fleet.run_ports(self.name, (self.fleet.settings.dispatch.queue,))

    def start(self, run: Any) -> None:
        """Register the session as running here, and watch for `orchestra cancel`."""
        settings = self.fleet.settings
        submission = {
            "origin": SESSION_ORIGIN_RUN, "pipeline_name": run.pipeline_name,
            "pipeline_path": run.start.source.path or "", "pipeline_blob": run.start.source.blob or "",
            "repos": {name: repo.remote or "" for name, repo in settings.workspace.repos.items()},
        }  # fmt: skip
        ledger = self.fleet.ledger
        ledger.add(run.session_id, "", settings.dispatch.queue, submission)
        ledger.start(run.session_id, self.name)
        self._done = watch_session(run, ledger, run.session_id, self.stop, self.cancelled)

    def end(self, run: Any) -> bool:
        """The run stopped: a cancelled session is recorded `cancelled`; the entry is done. Whether it was
        cancelled."""
        if self._done is not None:
            self._done.set()
        cancelled = self.cancelled.is_set()
        if cancelled and run.ports.store is not None:
            with suppress(Exception):
                append_record(run.ports.store, run.session_id, PipelineLifecycle(
                    LifecycleEvent.CANCELLED, run.pipeline_name, error=CANCEL_REASON,
                ))  # fmt: skip
        with suppress(Exception):
            self.fleet.ledger.finish(run.session_id, self.name)
        return cancelled


__all__ = ["FleetRun", "command_runner_name"]
