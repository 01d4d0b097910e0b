"""Helpers for engine tests: DOT text to Graph, and an engine wired to in-memory fakes that records events."""

from __future__ import annotations

import random
import textwrap
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from orchestra_core.engine.branch_workspaces import BranchWorkspaces
from orchestra_core.engine.runner import PipelineEngine
from orchestra_core.engine.stage import Handler
from orchestra_core.graph import Graph, parse_dot
from orchestra_core.handlers import HandlerRegistry, build_registry
from orchestra_core.model.checkpoint import Checkpoint, RunResult
from orchestra_core.model.events import EngineEvent
from orchestra_core.ports.checkpoint_sink import CheckpointSink
from orchestra_core.ports.codergen_backend import CodergenBackend
from orchestra_core.ports.command_runner import CommandRunner
from orchestra_core.ports.interviewer import Interviewer
from orchestra_core.ports.run_directory import RunDirectoryFactory
from orchestra_core.testing.clock import ManualClock
from orchestra_core.testing.run_directory import InMemoryRunDirectories, InMemoryRunDirectory

ROOT = "/runs/test"


def graph(dot: str, path: str | None = None) -> Graph:
    """Parse (dedented) DOT text."""
    return parse_dot(textwrap.dedent(dot), path=path)


def linear(*node_ids: str, goal: str = "test", extra: str = "") -> Graph:
    """start -> ids... -> done, every id a box with a prompt."""
    nodes = "\n".join(f'    {node} [prompt="do {node}"]' for node in node_ids)
    chain = " -> ".join(("start", *node_ids, "done"))
    return graph(
        f"""
        digraph p {{
            graph [goal="{goal}"{extra}]
            start [shape=Mdiamond]
            done [shape=Msquare]
        {nodes}
            {chain}
        }}
        """
    )


class EventLog:
    """An observer that keeps every event (thread-safe)."""

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []
        self._lock = threading.Lock()

    def on_event(self, event: EngineEvent) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, kind: type[EngineEvent], branch: Any = ...) -> list[Any]:
        """Events of one type (optionally only those of one branch; None = main line)."""
        return [e for e in self.events if isinstance(e, kind) and (branch is ... or e.branch == branch)]

    @property
    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


class Harness:
    """An engine over in-memory run directories and a manual clock, with an event log."""

    def __init__(
        self,
        *,
        backend: CodergenBackend | None = None,
        interviewer: Interviewer | None = None,
        command_runner: CommandRunner | None = None,
        handlers: Mapping[str, Handler] | None = None,
        registry: HandlerRegistry | None = None,
        sinks: Sequence[CheckpointSink] = (),
        observers: Sequence[Any] = (),
        max_node_visits: int | None = None,
        run_directory: RunDirectoryFactory | None = None,
        seed: int = 7,
        pipeline_loader: Any = None,
        branch_workspaces: BranchWorkspaces | None = None,
        workspace_snapshot: Any = None,
    ) -> None:
        self.clock = ManualClock()
        self.dirs = run_directory or InMemoryRunDirectories(self.clock)
        self.log = EventLog()
        self.registry = registry or build_registry(
            backend=backend, interviewer=interviewer, command_runner=command_runner, pipeline_loader=pipeline_loader
        )
        for type_name, handler in (handlers or {}).items():
            self.registry.register(type_name, handler)
        self.engine = PipelineEngine(
            self.registry,
            run_directory=self.dirs,
            clock=self.clock,
            observers=(self.log, *observers),
            checkpoint_sinks=sinks,
            max_node_visits=max_node_visits,
            rng=random.Random(seed),
            branch_workspaces=branch_workspaces,
            workspace_snapshot=workspace_snapshot,
        )

    def run(self, pipeline: Graph, *, root: str = ROOT, session_id: str = "session-1", **kwargs: Any) -> RunResult:
        return self.engine.run(pipeline, session_id=session_id, logs_root=root, **kwargs)

    def directory(self, root: str = ROOT) -> InMemoryRunDirectory:
        assert isinstance(self.dirs, InMemoryRunDirectories)
        return self.dirs.opened[root]

    def checkpoints(self, root: str = ROOT) -> list[Checkpoint]:
        return self.directory(root).checkpoints


def comparable(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint without its timestamp and with outcomes as plain data, for equality checks."""
    return {
        "current_node": checkpoint.current_node,
        "completed_nodes": checkpoint.completed_nodes,
        "node_outcomes": {k: (v.status, v.preferred_label, v.suggested_next_ids, v.notes, v.failure_reason) for k, v in checkpoint.node_outcomes.items()},
        "node_retries": dict(checkpoint.node_retries),
        "context": dict(checkpoint.context),
        "next_node": checkpoint.next_node,
        "status": checkpoint.status,
        "failure_reason": checkpoint.failure_reason,
        "node_visits": checkpoint.node_visits,
        "loop_restarts": checkpoint.loop_restarts,
    }
