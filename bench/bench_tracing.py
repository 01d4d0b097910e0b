"""What OpenTelemetry tracing costs a run (issue 32): per agent turn with tracing off and on (exporting over
OTLP/HTTP to a receiver on loopback that decodes every request), and for a whole `orchestra run` process (the
OpenTelemetry import and the last flush included).

Prints one JSON object. Exits 1 when a run with tracing off imports anything of OpenTelemetry or Orchestra's
exporter, or when the traced runs' spans did not all reach the receiver.

- `per_turn`: a pipeline of NODES codergen nodes of TURNS turns each, every turn with TOOL_CALLS tool calls, run
  in process by a backend that answers at once (no model, no git), so the figures are the engine's own time per
  turn, median of RUNS alternating runs: `off` (no tracer), `spans_built` (the in-memory tracer: what the run's
  thread does, the spans built) and `exported` (the OTLP tracer posting to a receiver in another process, its last
  flush included); `added_us_per_turn` is exported minus off, `added_cpu_us_per_turn` the same in CPU time (the
  sender thread's encoding included). With a real model the sender works while the run waits for the model.
- `process`: median wall time of `orchestra run --backend simulate` of a 20-node tool pipeline, tracing off and
  on, and the modules a run with tracing off imported.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NODES = 20
TURNS = 10
TOOL_CALLS = 3
RUNS = 7
PROCESS_RUNS = 5
ORCHESTRA = Path(sys.executable).with_name("orchestra")
ENV = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
WATCHED = ("opentelemetry", "google.protobuf", "orchestra_adapters.telemetry.otlp_tracer")

_PROBE = f"""
import sys
from orchestra_cli.errors import run_guarded
from orchestra_cli.app import app
try:
    run_guarded(app, sys.argv[1:])
except SystemExit:
    pass
print("LOADED", ",".join(sorted(m for m in sys.modules if m.startswith({WATCHED!r}))))
"""


def _pipeline(kind: str) -> str:
    """A linear pipeline of NODES nodes: codergen boxes, or tool nodes that echo."""
    if kind == "tool":
        nodes = "\n".join(f'  n{i} [shape=parallelogram, tool_command="echo {i}"]' for i in range(NODES))
    else:
        nodes = "\n".join(f'  n{i} [prompt="Step {i}"]' for i in range(NODES))
    chain = " -> ".join(["start", *(f"n{i}" for i in range(NODES)), "done"])
    return f"digraph bench {{\n  start [shape=Mdiamond]; done [shape=Msquare]\n{nodes}\n  {chain}\n}}\n"


class InstantBackend:
    """TURNS turns per node, each with TOOL_CALLS timed tool calls, answered at once."""

    def run(self, node, prompt, context, on_turn=None):  # type: ignore[no-untyped-def]
        from datetime import UTC, datetime

        from orchestra_core.model.turn import AgentTurn, TokenUsage, ToolCall

        for number in range(TURNS):
            now = datetime.now(UTC)
            calls = [ToolCall(f"project:tool-{n}", {"n": n}, f"c{n}", "ok", started_at=now, duration_s=0.0001)
                     for n in range(TOOL_CALLS)]  # fmt: skip
            turn = AgentTurn(
                node.id, number, "claude-sonnet-4", "anthropic", tool_calls=calls, duration_s=0.001,
                token_usage=TokenUsage(1200, 300, 800), cost_usd=0.004,
            )  # fmt: skip
            if on_turn is not None:
                on_turn(turn)
        return "done"


class ReceiverProcess:
    """A receiver on loopback in a process of its own, as a collector is (its decoding is not this process's)."""

    def __enter__(self) -> ReceiverProcess:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.otlp_receiver"], cwd=ROOT, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env={**ENV, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert self._process.stdout is not None
        self.url = self._process.stdout.readline().strip()
        return self

    def spans(self) -> int:
        import requests

        return int(requests.get(f"{self.url}/spans", timeout=30).text)

    def __exit__(self, *_exc: object) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=30)


def bench_per_turn() -> dict[str, object]:
    from orchestra_adapters.telemetry.export_settings import TraceExport
    from orchestra_adapters.telemetry.otlp_tracer import OtlpTracer
    from orchestra_core import parse_pipeline, run_pipeline
    from orchestra_core.testing import InMemorySessionStore, InMemoryTracer

    graph = parse_pipeline(_pipeline("codergen"))
    turns = NODES * TURNS
    wall: dict[str, list[float]] = {"off": [], "built": [], "exported": []}
    cpu: dict[str, list[float]] = {"off": [], "built": [], "exported": []}
    with ReceiverProcess() as receiver:
        exporter = OtlpTracer(TraceExport(f"{receiver.url}/v1/traces"), warn=lambda message: None)

        def one(kind: str) -> None:
            tracer = {"off": None, "built": InMemoryTracer(), "exported": exporter}[kind]
            started, started_cpu = time.perf_counter(), time.process_time()
            run_pipeline(graph, backend=InstantBackend(), store=InMemorySessionStore(), tracer=tracer)
            if tracer is not None:
                tracer.flush(30.0)  # the sender's work counted with the run that made it
            wall[kind].append((time.perf_counter() - started) / turns * 1e6)
            cpu[kind].append((time.process_time() - started_cpu) / turns * 1e6)

        for kind in wall:  # warm-up
            one(kind)
        for figures in (*wall.values(), *cpu.values()):
            figures.clear()
        for _ in range(RUNS):
            for kind in wall:
                one(kind)
        exporter.close()
        spans = receiver.spans()
    per_run = 1 + (NODES + 2) + turns * (1 + TOOL_CALLS)  # the root, every stage, turns and their tool calls

    def median(figures: list[float]) -> float:
        return round(statistics.median(figures), 1)

    return {
        "nodes": NODES,
        "turns": turns,
        "tool_calls_per_turn": TOOL_CALLS,
        "spans_per_turn": 1 + TOOL_CALLS,
        "off_us_per_turn": median(wall["off"]),
        "spans_built_us_per_turn": median(wall["built"]),
        "exported_us_per_turn": median(wall["exported"]),
        "added_us_per_turn": round(median(wall["exported"]) - median(wall["off"]), 1),
        "added_cpu_us_per_turn": round(median(cpu["exported"]) - median(cpu["off"]), 1),
        "spans_received": spans,
        "all_delivered": spans == per_run * (RUNS + 1),
    }


def _probe(work: Path, env: dict[str, str]) -> tuple[float, list[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "run", "tools.dot", "--backend", "simulate"], cwd=work, env=env,
        capture_output=True, text=True,
    )  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode != 0 or "pipeline succeeded" not in done.stdout + done.stderr:
        raise SystemExit(f"orchestra run failed: {done.stderr[-2000:]}")
    [line] = [line for line in done.stdout.splitlines() if line.startswith("LOADED")]
    return took, [name for name in line.removeprefix("LOADED").strip().split(",") if name]


def bench_process() -> dict[str, object]:
    from tests.support.otlp_receiver import OtlpReceiver

    with tempfile.TemporaryDirectory() as temp, OtlpReceiver() as receiver:  # decoding in this process: not timed
        work = Path(temp)
        (work / "tools.dot").write_text(_pipeline("tool"), encoding="utf-8")
        env = {**ENV, "HOME": temp, "PYTHONPATH": str(ROOT)}
        traced = {**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
        _probe(work, env), _probe(work, traced)  # warm-up: bytecode, the store
        off, on = [], []
        loaded_off: set[str] = set()
        for _ in range(PROCESS_RUNS):
            seconds, loaded = _probe(work, env)
            off.append(seconds)
            loaded_off.update(loaded)
            on.append(_probe(work, traced)[0])
        runs_received = len({received.span.context.trace_id for received in receiver.spans()})
    return {
        "pipeline_nodes": NODES,
        "off_s": round(statistics.median(off), 3),
        "on_s": round(statistics.median(on), 3),
        "added_s": round(statistics.median(on) - statistics.median(off), 3),
        "traced_runs_received": runs_received,
        "off_imported": sorted(loaded_off),
    }


def main() -> int:
    per_turn = bench_per_turn()
    process = bench_process()
    clean = not process["off_imported"]
    complete = bool(per_turn["all_delivered"]) and process["traced_runs_received"] == PROCESS_RUNS + 1
    print(json.dumps({"bench": "tracing", "per_turn": per_turn, "process": process,
                      "off_imports_nothing": clean, "traces_complete": complete}))  # fmt: skip
    return 0 if clean and complete else 1


if __name__ == "__main__":
    sys.exit(main())
