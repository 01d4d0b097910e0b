"""Helpers for tests of `orchestra serve`: projects, pipelines, SSE parsing, waiting for a condition."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
# The base URL of test clients of a server without a token (it answers only loopback names).
LOCAL = "http://127.0.0.1"

TOOL_RUN = """digraph tool_run {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [shape=parallelogram, tool_command="echo working"]
    start -> work -> done
}
"""
GATED = """digraph gated {
    start [shape=Mdiamond]; done [shape=Msquare]
    prepare [shape=parallelogram, tool_command="echo prepared"]
    review [shape=hexagon, label="Ship it?"]
    ship [shape=parallelogram, tool_command="echo shipped"]
    rework [shape=parallelogram, tool_command="echo reworked"]
    start -> prepare -> review
    review -> ship [label="[S] Ship"]
    review -> rework [label="[R] Rework"]
    ship -> done
    rework -> done
}
"""
STUCK = """digraph stuck {
    start [shape=Mdiamond]; done [shape=Msquare]
    wait [shape=parallelogram, tool_command="sleep 60"]
    after [shape=parallelogram, tool_command="echo after"]
    start -> wait -> after -> done
}
"""


def make_project(root: Path, backend: str = "simulate") -> Path:
    """A project directory with an orchestra.yaml that runs offline."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "orchestra.yaml").write_text(f"backend: {backend}\n", encoding="utf-8")
    return root


def wait_until(check: Callable[[], T | None], what: str, timeout: float = 60) -> T:
    """Poll `check` until it returns something truthy (a readiness wait, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def sse_messages(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Parse SSE lines into messages `{"id", "event", "data"}` (comments skipped; `data` decoded as JSON)."""
    message: dict[str, Any] = {}
    for line in lines:
        if line == "":
            if "data" in message:
                message["data"] = json.loads(message["data"])
                yield message
            message = {}
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            message[name] = value[1:] if value.startswith(" ") else value
