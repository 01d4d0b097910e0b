"""A pipeline's one-line synopsis: what kind of work it does (PLANNING, EXECUTION, HYBRID, CONTROL) and its counts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from attrs import asdict, frozen

from orchestra_core.model.graph import Graph

# What a pipeline is called by the kinds of stages it has.
PLANNING = "PLANNING"  # LLM stages, no tool stages
EXECUTION = "EXECUTION"  # tool stages, no LLM stages
HYBRID = "HYBRID"  # both
CONTROL = "CONTROL"  # neither: only start/exit, human gates, conditions, fan-outs, manager loops


@frozen
class Synopsis:
    """The kind of pipeline and how many of each node kind it has (`compile` prints it)."""

    kind: str
    llm_stages: int
    tool_stages: int
    human_gates: int
    parallel_fan_outs: int
    manager_loops: int
    nodes: int
    edges: int

    def as_json(self) -> dict[str, Any]:
        """The `synopsis` object of `compile --json`."""
        return asdict(self)

    def line(self) -> str:
        """`HYBRID pipeline: 2 LLM stages, 1 tool stage, ...` (manager loops only when there are some)."""
        counts = [
            _count(self.llm_stages, "LLM stage"),
            _count(self.tool_stages, "tool stage"),
            _count(self.human_gates, "human gate"),
            _count(self.parallel_fan_outs, "parallel fan-out"),
        ]
        if self.manager_loops:
            counts.append(_count(self.manager_loops, "manager loop"))
        counts += [_count(self.nodes, "node"), _count(self.edges, "edge")]
        return f"{self.kind} pipeline: {', '.join(counts)}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def pipeline_synopsis(graph: Graph) -> Synopsis:
    """Classify the pipeline by its stages: PLANNING (only LLM), EXECUTION (only tool), HYBRID (both), else CONTROL."""
    handlers = Counter(node.handler_type for node in graph.nodes.values())
    llm, tool = handlers["codergen"], handlers["tool"]
    kind = HYBRID if llm and tool else PLANNING if llm else EXECUTION if tool else CONTROL
    return Synopsis(
        kind=kind,
        llm_stages=llm,
        tool_stages=tool,
        human_gates=handlers["wait.human"],
        parallel_fan_outs=handlers["parallel"],
        manager_loops=handlers["stack.manager_loop"],
        nodes=len(graph.nodes),
        edges=len(graph.edges),
    )
