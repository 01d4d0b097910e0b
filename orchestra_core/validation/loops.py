"""Lint rule `loop_bound`: a loop through an LLM stage that says nowhere how often it may go round.

Such a loop ends only when its way out opens; with a model that never gets it right (or the simulate
backend) it would run, and spend, until the default visit bound stops it (graph/visits.py). The warning
names the loop and says how to bound it. A loop is bounded when one of its nodes sets `max_visits` (`0`
included: an explicit choice to lift the bound), or the graph sets `default_max_visits`. Loops follow edges
and the engine's jumps: retry targets, a fan-out's branches and join, goal gates sending the run back.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from orchestra_core.graph import visits
from orchestra_core.model.graph import Graph
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity
from orchestra_core.validation.flow import ways_on

RULE = "loop_bound"
LLM_HANDLER = "codergen"


def check_loop_bound(graph: Graph) -> Iterator[Diagnostic]:
    """One warning per group of unbounded loops through an LLM stage (a strongly connected component)."""
    if graph.attrs.get(visits.GRAPH_KEY, "").strip():
        return
    links = _links(graph)
    for component in _cycles(links):
        llm = [n for n in graph.nodes if n in component and graph.nodes[n].handler_type == LLM_HANDLER]
        if not llm:
            continue
        shortest = _shortest_loop(llm[0], links, component)
        loop = " -> ".join(shortest)
        if len(component) > len(set(shortest)):
            members = [n for n in graph.nodes if n in component]
            loop = f"through {', '.join(members[:-1])} and {members[-1]} (such as {loop})"
        yield Diagnostic(
            RULE,
            Severity.WARNING,
            f"the loop {loop} runs an LLM stage and no node of it sets a visit bound: unless its way out opens, it "
            f"goes round until one of its nodes has run {visits.DEFAULT_MAX_VISITS} times (the default bound), "
            "then the run fails",
            node_id=llm[0],
            fix=(
                f"set {visits.NODE_KEY}=N on a node of the loop (e.g. {visits.NODE_KEY}=5 on {llm[0]}), or "
                f"{visits.GRAPH_KEY}=N on the graph; 0 lifts the bound"
            ),
        )


def _links(graph: Graph) -> dict[str, list[str]]:
    """Where a run may go from each node that sets no bound of its own (bounded nodes break loops)."""
    free = {n for n, node in graph.nodes.items() if not node.attrs.get(visits.NODE_KEY, "").strip()}
    gate_targets = _goal_gate_targets(graph)
    links: dict[str, list[str]] = {}
    for node_id in free:
        node = graph.nodes[node_id]
        ways = ways_on(graph, node)[1] + (gate_targets if graph.is_exit(node) else [])
        links[node_id] = [target for target in dict.fromkeys(ways) if target in free]
    return links


def _goal_gate_targets(graph: Graph) -> list[str]:
    """Where an exit sends the run back when a goal gate is unmet."""
    gates = [node for node in graph.nodes.values() if node.goal_gate]
    if not gates:
        return []
    targets = [t for gate in gates for t in (gate.retry_target, gate.fallback_retry_target)]
    targets += [graph.retry_target, graph.fallback_retry_target]
    return [t for t in dict.fromkeys(targets) if t in graph.nodes]


def _cycles(links: dict[str, list[str]]) -> list[set[str]]:
    """The strongly connected components that hold a cycle (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(links):
        if root in index:
            continue
        work = [(root, iter(links[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            following = next(successors, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append((following, iter(links[following])))
                elif following in on_stack:
                    low[node] = min(low[node], index[following])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in links[node]:
                    found.append(component)
    return found


def _shortest_loop(start: str, links: dict[str, list[str]], component: set[str]) -> list[str]:
    """The shortest way from `start` round to itself inside its component."""
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for following in links[current]:
            if following == start:
                path = [current]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if following in component and following not in came_from:
                came_from[following] = current
                queue.append(following)
    return [start, start]


LOOP_RULES = (FunctionRule(RULE, check_loop_bound),)
