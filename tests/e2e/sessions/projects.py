"""A temp project for session end-to-end tests: its pipelines, `orchestra` processes in it, and its store."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestra_core.ports.session_store import SessionStore
from orchestra_core.session.api import latest_checkpoint
from orchestra_core.session.checkpoints import from_record
from tests.support.processes import kill_group_quietly

ORCHESTRA = Path(sys.executable).with_name("orchestra")

# `gate` signals readiness with the file `ready`; while the file `hold` exists it records its process
# group in `hold.pid` and sleeps, so a test can kill the run inside it.
STEPS = r"""digraph steps {
    graph [goal="survive a crash"]
    start [shape=Mdiamond]
    done  [shape=Msquare]
    one   [shape=parallelogram, tool_command="echo one >> ran.txt"]
    plan  [prompt="Plan how to $goal"]
    gate  [shape=parallelogram, tool_command="echo gate >> ran.txt; touch ready; if [ -e hold ]; then echo $$ > hold.pid; sleep 60; fi"]
    three [shape=parallelogram, tool_command="echo three >> ran.txt"]
    start -> one -> plan -> gate -> three -> done
}
"""
STEP_NODES = ["start", "one", "plan", "gate", "three", "done"]


class Project:
    """A directory with an orchestra.yaml (which pins the project root) and the `steps` pipeline."""

    def __init__(self, root: Path, storage: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.storage = dict(storage or {})

    @classmethod
    def create(cls, root: Path, *, storage: Mapping[str, str] | None = None) -> Project:
        root.mkdir(parents=True)
        lines = (
            ["storage:", *(f"  {key}: {value}" for key, value in (storage or {}).items())] if storage else []
        )
        (root / "orchestra.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (root / "steps.dot").write_text(STEPS, encoding="utf-8")
        return cls(root, storage)

    # Processes ---------------------------------------------------------------------------------------
    def cli(self, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run `orchestra ARGS` here; a traceback on stderr fails the test."""
        result = subprocess.run(
            [str(ORCHESTRA), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=self.root,
            timeout=timeout,
            env={**os.environ, "NO_COLOR": "1"},
        )
        assert "Traceback" not in result.stderr, result.stderr
        return result

    def run_json(self, *args: str | Path) -> dict[str, Any]:
        """`orchestra ARGS --json --quiet`, which must end with a run document (exit 0 or 1)."""
        result = self.cli(*args, "--json", "--quiet")
        assert result.returncode in (0, 1), result.stderr
        return json.loads(result.stdout)

    def spawn(self, *args: str | Path) -> subprocess.Popen[str]:
        """Start `orchestra ARGS` in its own process group (so a test can kill the whole group)."""
        return subprocess.Popen(
            [str(ORCHESTRA), *map(str, args)],
            cwd=self.root,
            text=True,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )

    def hold(self) -> None:
        """Make the next run wait inside `gate` until killed."""
        (self.root / "hold").touch()
        (self.root / "ready").unlink(missing_ok=True)
        (self.root / "hold.pid").unlink(missing_ok=True)

    def release(self) -> None:
        (self.root / "hold").unlink(missing_ok=True)

    def wait_in_gate(self, process: subprocess.Popen[str], seconds: float = 60) -> None:
        """Wait until the held run sleeps inside `gate`."""
        deadline = time.monotonic() + seconds
        while not (self.root / "hold.pid").is_file() or not (self.root / "hold.pid").read_text().strip():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the run never reached gate"
            time.sleep(0.02)
        self.wait_recorded("node gate started", process, deadline)

    def wait_recorded(self, line: str, process: subprocess.Popen[str], deadline: float) -> None:
        """Wait until the newest session's story ends with `line`: a node's start reaches the store with its
        checkpoint or, when the node runs longer, by the recorder's flusher within moments."""
        from tests.support.sessions import story

        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            with contextlib.closing(self.open_store()) as store:
                sessions = store.list_sessions()
                if sessions and story(store, sessions[0].session_id)[-1:] == [line]:
                    return
            assert time.monotonic() < deadline, f"the store never showed {line!r}"
            time.sleep(0.02)

    def kill(self, process: subprocess.Popen[str], sig: int = signal.SIGKILL) -> int:
        """Send `sig` to the run's process group, wait for it, and stop a sleeping `gate` tool too."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        code = process.wait(30)
        self.kill_gate_tool()
        return code

    def kill_gate_tool(self) -> None:
        pid_file = self.root / "hold.pid"
        if pid_file.is_file() and pid_file.read_text().strip():
            kill_group_quietly(int(pid_file.read_text()), self.root)

    def ran(self) -> list[str]:
        """The tool nodes that ran, in order."""
        path = self.root / "ran.txt"
        return path.read_text(encoding="utf-8").split() if path.exists() else []

    # The store ---------------------------------------------------------------------------------------
    def open_store(self) -> SessionStore:
        """The project's session store, opened in the test process."""
        if self.storage.get("backend") == "cxdb":
            from orchestra_adapters.storage.cxdb.store import CxdbSessionStore

            return CxdbSessionStore(self.storage["addr"], self.storage["url"])
        from orchestra_adapters.storage.sqlite_store import SqliteSessionStore

        return SqliteSessionStore(self.root / ".orchestra" / "orchestra.db")

    def final_state(self, store: SessionStore, session: str) -> dict[str, Any]:
        """The session's latest checkpoint as plain data, with this project's path and the session id masked."""
        found = latest_checkpoint(store, session)
        assert found is not None
        checkpoint = from_record(found.checkpoint, None)
        data = {
            "current_node": checkpoint.current_node,
            "completed_nodes": list(checkpoint.completed_nodes),
            "node_outcomes": {
                node: outcome.status.value for node, outcome in checkpoint.node_outcomes.items()
            },
            "node_retries": dict(checkpoint.node_retries),
            "context": dict(checkpoint.context),
            "next_node": checkpoint.next_node,
            "status": checkpoint.status.value,
            "failure_reason": checkpoint.failure_reason,
            "logs": list(checkpoint.logs),
            "node_visits": checkpoint.node_visits,
            "loop_restarts": checkpoint.loop_restarts,
        }
        text = json.dumps(data, sort_keys=True).replace(str(self.root), "<project>")
        return json.loads(text.replace(f"runs/{session}", "runs/<session>"))
