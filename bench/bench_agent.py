"""Agent backend speed: LangGraph's own overhead per turn (scripted model), and CLI start-up without LangChain.

Prints one JSON object. Exits 1 when `orchestra --help` or `orchestra compile` imports langchain or langgraph.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NODES = 20
TURNS_PER_NODE = 10
STARTUP_RUNS = 5
STARTUP_TARGET_S = 0.3

PIPELINE = """digraph bench {
  graph [goal="Measure start-up"]
  start [shape=Mdiamond]
  work [prompt="Do $goal"]
  exit [shape=Msquare]
  start -> work -> exit
}
"""

_PROBE = """
import json, sys, time
started = time.perf_counter()
sys.argv = ["orchestra", *json.loads(sys.argv[1])]
from orchestra_cli.main import main
try:
    main()
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules if m.startswith(("langchain", "langgraph"))})
print(json.dumps({"seconds": time.perf_counter() - started, "heavy": heavy}), file=sys.stderr)
"""


def bench_turn_overhead(workdir: Path, *, fallbacks: bool = False, watched: bool = False) -> dict[str, object]:
    """Run NODES nodes of TURNS_PER_NODE turns each; time per turn minus the scripted model's own time. With
    `fallbacks`, the node's model has a fallback it never needs (what failover costs while unused). `watched`
    gives the backend the engine's `on_activity` (an ActivityFeed): replies are streamed, as for a live view."""
    from orchestra_adapters.backends.langgraph_backend import LangGraphBackend
    from orchestra_adapters.llm.chat_model_factory import LangChainChatModelFactory
    from orchestra_adapters.llm.scripted import ScriptedChatModel
    from orchestra_core.agents.tools import AgentTool
    from orchestra_core.handlers.activity import ActivityFeed
    from orchestra_core.model.context import Context
    from orchestra_core.model.graph import Node
    from orchestra_core.model.settings import OrchestraSettings, ProviderSettings, ProvidersSettings

    step = "    - {content: working, tool_calls: [{name: 'project:note', args: {text: hello}}]}\n"
    cassette = "nodes:\n" + "".join(
        f"  n{i}:\n" + step * (TURNS_PER_NODE - 1) + "    - Done.\n" for i in range(NODES + 1)
    )
    (workdir / "cassette.yaml").write_text(cassette, encoding="utf-8")
    chain = {"worker": ("scripted:backup",)} if fallbacks else {}
    provider = ProviderSettings(models={"worker": "primary"}, fallbacks=chain, cassette="cassette.yaml")
    settings = OrchestraSettings(
        providers=ProvidersSettings("scripted", {"scripted": provider}), source_path=workdir / "orchestra.yaml"
    )
    model_seconds = [0.0]
    generate = ScriptedChatModel._generate

    def timed_generate(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return generate(self, *args, **kwargs)
        finally:
            model_seconds[0] += time.perf_counter() - started

    stream = ScriptedChatModel._stream

    def timed_stream(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        chunks = stream(self, *args, **kwargs)
        while True:
            started = time.perf_counter()
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            finally:
                model_seconds[0] += time.perf_counter() - started
            yield chunk

    ScriptedChatModel._generate = timed_generate  # type: ignore[method-assign]
    ScriptedChatModel._stream = timed_stream  # type: ignore[method-assign]

    class Agent:
        provider, model = "scripted", "primary"

    class Resolver:
        def resolve(self, node, context):  # type: ignore[no-untyped-def]
            return Agent()

    class Tools:
        def tools_for(self, node, agent, context, tracker):  # type: ignore[no-untyped-def]
            def note(text: str) -> str:
                return f"noted {text}"

            return [AgentTool("project:note", "Take a note.", note)]

    backend = LangGraphBackend(
        LangChainChatModelFactory(settings, environ={}), Resolver(), Tools(), workdir / "agents.db"
    )
    context = Context({"internal.session_id": "bench", "internal.fidelity": "compact"})
    backend.run(Node("n0"), "Warm up.", context)  # imports, schema creation, first SQLite writes
    per_turn_ms: list[float] = []
    for index in range(1, NODES + 1):
        model_seconds[0] = 0.0
        turns: list[object] = []
        started = time.perf_counter()
        feed = ActivityFeed(lambda activity: None) if watched else None
        backend.run(Node(f"n{index}"), "Work.", context, turns.append, on_activity=feed)
        elapsed = time.perf_counter() - started
        per_turn_ms.append((elapsed - model_seconds[0]) / len(turns) * 1000)
    backend.close()
    ScriptedChatModel._generate = generate  # type: ignore[method-assign]
    ScriptedChatModel._stream = stream  # type: ignore[method-assign]
    return {
        "nodes": NODES,
        "turns_per_node": TURNS_PER_NODE,
        "overhead_ms_per_turn_median": round(statistics.median(per_turn_ms), 3),
        "overhead_ms_per_turn_max": round(max(per_turn_ms), 3),
    }


def bench_startup(workdir: Path) -> dict[str, object]:
    """Median wall time of `orchestra --help` and `orchestra compile`, and which heavy modules they import."""
    pipeline = workdir / "bench.dot"
    pipeline.write_text(PIPELINE, encoding="utf-8")
    results: dict[str, object] = {}
    for label, argv in (("help", ["--help"]), ("compile", ["compile", str(pipeline)])):
        seconds, heavy = [], set()
        for _ in range(STARTUP_RUNS):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", _PROBE, json.dumps(argv)], cwd=ROOT, capture_output=True, text=True
            )
            seconds.append(time.perf_counter() - started)
            probe = json.loads(done.stderr.strip().splitlines()[-1])
            heavy.update(probe["heavy"])
        results[label] = {"median_s": round(statistics.median(seconds), 3), "heavy_modules": sorted(heavy)}
    return results


def main() -> int:
    with tempfile.TemporaryDirectory() as temp:
        workdir = Path(temp)
        turns = bench_turn_overhead(workdir)
        (workdir / "fallbacks").mkdir()
        with_fallbacks = bench_turn_overhead(workdir / "fallbacks", fallbacks=True)
        (workdir / "watched").mkdir()
        watched = bench_turn_overhead(workdir / "watched", watched=True)
        startup = bench_startup(workdir)
    imports_clean = all(not entry["heavy_modules"] for entry in startup.values())  # type: ignore[index]
    fast = all(entry["median_s"] < STARTUP_TARGET_S for entry in startup.values())  # type: ignore[index]
    print(
        json.dumps(
            {
                "bench": "agent",
                "langgraph_turn": turns,
                "langgraph_turn_with_unused_fallback": with_fallbacks,
                "langgraph_turn_watched_streamed": watched,
                "startup": startup,
                "startup_target_s": STARTUP_TARGET_S,
                "startup_within_target": fast,
                "startup_imports_no_langchain": imports_clean,
            }
        )
    )
    return 0 if imports_clean else 1


if __name__ == "__main__":
    sys.exit(main())
