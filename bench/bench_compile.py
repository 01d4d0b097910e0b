"""Benchmark `orchestra compile` on a generated 2,000-node, 4,000-edge pipeline, and `orchestra --help`.

Prints one JSON object: whole-process wall times (best and median of several runs) against the targets
(compile under 1 s, --help under 0.3 s), plus an in-process breakdown of parse, transforms and validation.
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ORCHESTRA = Path(sys.executable).with_name("orchestra")
NODES = 2000
EDGES = 4000
GROUP = 50  # stages per subgraph (each subgraph label becomes a class)
RUNS = 7
TARGETS = {"compile_s": 1.0, "help_s": 0.3}


def generate_pipeline(nodes: int = NODES, edges: int = EDGES) -> str:
    """A valid pipeline: a chain from start to exit, then conditional back and skip edges up to `edges`."""
    stages = nodes - 2
    lines = [
        "digraph Bench {",
        '  graph [goal="Exercise the compiler", default_max_retries=1, model_stylesheet="'
        "* { llm_model: worker; llm_provider: anthropic; } box { reasoning_effort: medium; } "
        ".review { llm_model: smart; } .group-7 { llm_model: cheap; } #s42 { reasoning_effort: high; }"
        + '"]',
        '  node [shape=box, timeout="15m"]',
        "  start [shape=Mdiamond]",
        "  exit [shape=Msquare]",
    ]
    for first in range(0, stages, GROUP):
        lines.append(f'  subgraph cluster_{first // GROUP} {{\n    label="Group {first // GROUP}"')
        for index in range(first, min(first + GROUP, stages)):
            extra = ', class="review", goal_gate=true, retry_target=s0' if index % 10 == 9 else ""
            lines.append(f'    s{index} [label="Stage {index}", prompt="Step {index} towards $goal"{extra}]')
        lines.append("  }")
    chain = ["start", *(f"s{i}" for i in range(stages)), "exit"]
    lines.extend(f"  {a} -> {b}" for a, b in itertools.pairwise(chain))
    conditions = (
        "outcome=fail",
        "outcome=success && context.tests=passed",
        "preferred_label=Fix",
        "context.retry",
    )
    for extra in range(edges - (len(chain) - 1)):
        source = extra % stages
        target = (source * 7 + 3) % stages
        condition = conditions[extra % len(conditions)]
        lines.append(
            f'  s{source} -> s{target} [condition="{condition}", weight={extra % 5}, label="e{extra}"]'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def time_runs(command: list[str], expected_code: int, runs: int = RUNS) -> dict[str, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if result.returncode != expected_code:
            raise SystemExit(
                f"{' '.join(command)} exited {result.returncode}: {result.stderr or result.stdout[-500:]}"
            )
    return {"best": round(min(times), 3), "median": round(statistics.median(times), 3)}


def in_process_breakdown(path: Path) -> dict[str, float]:
    from orchestra_core.graph import load_pipeline
    from orchestra_core.transforms import apply_transforms
    from orchestra_core.validation import validate

    start = time.perf_counter()
    graph = load_pipeline(path)
    parsed = time.perf_counter()
    transformed = apply_transforms(graph)
    applied = time.perf_counter()
    diagnostics = validate(transformed)
    validated = time.perf_counter()
    if any(d.severity == "error" for d in diagnostics):
        raise SystemExit(f"generated pipeline is not valid: {diagnostics[:3]}")
    return {
        "parse_s": round(parsed - start, 3),
        "transforms_s": round(applied - parsed, 3),
        "validate_s": round(validated - applied, 3),
        "nodes": len(graph.nodes),
        "edges": len(graph.edges),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "bench.dot"
        path.write_text(generate_pipeline(), encoding="utf-8")
        breakdown = in_process_breakdown(path)
        compile_times = time_runs([str(ORCHESTRA), "compile", str(path)], expected_code=0)
        json_times = time_runs([str(ORCHESTRA), "compile", "--json", str(path)], expected_code=0, runs=3)
    help_times = time_runs([str(ORCHESTRA), "--help"], expected_code=0, runs=10)
    report = {
        "benchmark": "compile",
        "pipeline": {"nodes": breakdown.pop("nodes"), "edges": breakdown.pop("edges")},
        "compile_s": compile_times,
        "compile_json_s": json_times,
        "help_s": help_times,
        "in_process": breakdown,
        "targets": TARGETS,
        "meets_targets": compile_times["best"] < TARGETS["compile_s"]
        and help_times["best"] < TARGETS["help_s"],
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
