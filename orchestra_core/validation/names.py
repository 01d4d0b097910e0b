"""Lint rules about names a person may have mistyped: attribute keys, and edge ends that only edges name.

`attribute_known`: a node or edge attribute Orchestra and Graphviz do not know is ignored at run time, so
`promt="..."` silently leaves a stage without its prompt; the warning says "did you mean 'prompt'?".
`edge_target_declared`: DOT creates a node for any id an edge names, so `review -> revew` makes a new,
empty stage; when such an id is declared nowhere but in edges and looks like a declared one, say so.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterator, Mapping

from orchestra_core.model.graph import Graph
from orchestra_core.validation.diagnostic import Diagnostic, FunctionRule, Severity

WARNING = Severity.WARNING

# What Orchestra reads (docs/pipelines.md, "Attributes"; backends' own keys included).
ORCHESTRA_NODE_KEYS = frozenset(
    {
        "label", "shape", "type", "prompt", "max_retries", "goal_gate", "retry_target",
        "fallback_retry_target", "fidelity", "thread_id", "class", "timeout", "llm_model", "llm_provider",
        "reasoning_effort", "auto_status", "allow_partial", "backend", "agent", "agent.role",
        "agent.persona", "agent.personality", "agent.task", "agent.tools", "agent.disallowed_tools",
        "agent.mode", "agent.max_turns", "agent.workdir", "tool_command", "tool_workdir", "max_parallel",
        "join_policy", "fan_in", "human.default_choice", "human.timeout", "manager.poll_interval",
        "manager.max_cycles", "manager.stop_condition", "manager.actions", "manager.steer_cooldown",
        "stack.child_dotfile", "stack.child_workdir", "stack.child_autostart", "retry_initial_delay",
        "retry_max_delay", "retry_backoff_factor", "retry_jitter", "max_node_visits", "max_visits",
        "tool_hooks.pre", "tool_hooks.post", "max_cycles", "stop_condition_key", "wait_ms", "queue",
        "retry_policy", "retry_preset", "k", "quorum_ratio", "quorum_count", "max_cost_usd", "max_tokens",
    }
)  # fmt: skip
ORCHESTRA_EDGE_KEYS = frozenset({"label", "condition", "weight", "fidelity", "thread_id", "loop_restart"})
ORCHESTRA_GRAPH_KEYS = frozenset(
    {
        "goal", "label", "model_stylesheet", "model_spec", "default_max_retries", "default_max_retry",
        "retry_target", "fallback_retry_target", "default_fidelity", "stack.child_dotfile",
        "stack.child_workdir", "tool_hooks.pre", "tool_hooks.post", "max_node_visits", "thread_id",
        "llm_model", "llm_provider", "queue", "default_max_visits", "default_retry_policy", "max_cost_usd",
        "max_tokens", "max_wall_time",
    }
)  # fmt: skip
# Graphviz's own node and edge attributes: they only change how `compile --render` draws the graph.
GRAPHVIZ_NODE_KEYS = frozenset(
    {
        "area", "color", "colorscheme", "comment", "distortion", "fillcolor", "fixedsize", "fontcolor",
        "fontname", "fontsize", "gradientangle", "group", "height", "href", "id", "image", "imagepos",
        "imagescale", "labelloc", "layer", "margin", "nojustify", "ordering", "orientation", "penwidth",
        "peripheries", "pin", "pos", "rects", "regular", "root", "samplepoints", "showboxes", "sides",
        "skew", "sortv", "style", "target", "tooltip", "URL", "vertices", "width", "xlabel", "xlp", "z",
    }
)  # fmt: skip
GRAPHVIZ_EDGE_KEYS = frozenset(
    {
        "arrowhead", "arrowsize", "arrowtail", "class", "color", "colorscheme", "comment", "constraint",
        "decorate", "dir", "edgehref", "edgetarget", "edgetooltip", "edgeURL", "fillcolor", "fontcolor",
        "fontname", "fontsize", "head_lp", "headclip", "headhref", "headlabel", "headport", "headtarget",
        "headtooltip", "headURL", "href", "id", "key", "labelangle", "labeldistance", "labelfloat",
        "labelfontcolor", "labelfontname", "labelfontsize", "labelhref", "labeltarget", "labeltooltip",
        "labelURL", "layer", "len", "lhead", "lp", "ltail", "minlen", "nojustify", "penwidth", "pos",
        "samehead", "sametail", "showboxes", "style", "tail_lp", "tailclip", "tailhref", "taillabel",
        "tailport", "tailtarget", "tailtooltip", "tailURL", "target", "tooltip", "URL", "xlabel", "xlp",
    }
)  # fmt: skip
GRAPHVIZ_GRAPH_KEYS = frozenset(
    {
        "bb", "beautify", "bgcolor", "center", "charset", "class", "clusterrank", "color", "colorscheme",
        "comment", "compound", "concentrate", "dpi", "fillcolor", "fontcolor", "fontname", "fontnames",
        "fontpath", "fontsize", "forcelabels", "gradientangle", "href", "id", "imagepath", "labeljust",
        "labelloc", "landscape", "layers", "layerselect", "layersep", "layout", "lheight", "lp", "lwidth",
        "margin", "mclimit", "newrank", "nodesep", "nojustify", "nslimit", "nslimit1", "ordering",
        "orientation", "outputorder", "overlap", "pack", "packmode", "pad", "page", "pagedir", "pencolor",
        "penwidth", "peripheries", "quantum", "rankdir", "ranksep", "ratio", "remincross", "rotate",
        "searchsize", "sep", "showboxes", "size", "sortv", "splines", "style", "stylesheet", "target",
        "tooltip", "truecolor", "URL", "viewport", "xdotversion",
    }
)  # fmt: skip
NODE_KEYS = ORCHESTRA_NODE_KEYS | GRAPHVIZ_NODE_KEYS
EDGE_KEYS = ORCHESTRA_EDGE_KEYS | GRAPHVIZ_EDGE_KEYS
GRAPH_KEYS = ORCHESTRA_GRAPH_KEYS | GRAPHVIZ_GRAPH_KEYS
# Keys the engine sets itself.
_INTERNAL_PREFIX = "internal."
_GRAPH_KEY_RE = re.compile(r"\bgraph\.([A-Za-z_][\w.]*\w|[A-Za-z_])")


def unknown_keys(attrs: Mapping[str, str], known: Collection[str]) -> list[str]:
    """The keys of `attrs` neither Orchestra nor Graphviz knows, in their order."""
    return [key for key in attrs if key not in known and not key.startswith(_INTERNAL_PREFIX)]


def did_you_mean(value: str, choices: Collection[str], cutoff: float = 0.75) -> str | None:
    """The closest of `choices` to `value` (case-insensitively), if one is close enough."""
    lowered = {choice.lower(): choice for choice in sorted(choices)}
    close = difflib.get_close_matches(value.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[close[0]] if close else None


def check_attribute_known(graph: Graph, built_in_types: Collection[str]) -> Iterator[Diagnostic]:
    """Graph, node and edge attributes are ones Orchestra or Graphviz reads (custom handlers' nodes are skipped).

    An unknown graph attribute is still in the run context as `graph.<key>`, so the message says so, and a
    pipeline that reads it there (a condition or node attribute naming `graph.<key>`) is not warned.
    """

    def diagnostic(
        key: str, known: Collection[str], node_id: str | None, edge: tuple[str, str] | None, ignored: str = "is ignored"
    ) -> Diagnostic:
        close = did_you_mean(key, known)
        hint = f"; did you mean {close!r}?" if close else ""
        fix = f"rename it to {close}" if close else "remove it, or see docs/pipelines.md for the attributes"
        message = f"unknown attribute {key!r} {ignored}{hint}"
        return Diagnostic("attribute_known", WARNING, message, node_id=node_id, edge=edge, fix=fix)

    unknown_graph_keys = unknown_keys(graph.attrs, GRAPH_KEYS)
    used = _graph_keys_used(graph) if unknown_graph_keys else frozenset()
    for key in unknown_graph_keys:
        if key not in used:
            yield diagnostic(key, GRAPH_KEYS, None, None, f"is only read as graph.{key} from the run context")
    for node in graph.nodes.values():
        if node.handler_type not in built_in_types:
            continue  # a custom handler may read attributes of its own
        for key in unknown_keys(node.attrs, NODE_KEYS):
            yield diagnostic(key, NODE_KEYS, node.id, None)
    for edge in graph.edges:
        for key in unknown_keys(edge.attrs, EDGE_KEYS):
            yield diagnostic(key, EDGE_KEYS, None, (edge.source, edge.target))


def _graph_keys_used(graph: Graph) -> frozenset[str]:
    """Graph attribute names the pipeline reads from the context itself (`context.graph.env=prod`, `$graph.env`)."""
    texts = [edge.condition for edge in graph.edges]
    texts += [value for node in graph.nodes.values() for value in node.attrs.values()]
    return frozenset(match.group(1) for match in _GRAPH_KEY_RE.finditer("\n".join(texts)))


def check_edge_target_declared(graph: Graph) -> Iterator[Diagnostic]:
    """An id only edges name that looks like a declared node's id is probably a typo of it."""
    only_in_edges = graph.edge_only_ids
    if not only_in_edges:
        return
    declared = [node_id for node_id in graph.nodes if node_id not in only_in_edges]
    reported: set[str] = set()
    for edge in graph.edges:
        for end in (edge.target, edge.source):
            if end not in only_in_edges or end in reported:
                continue
            close = did_you_mean(end, declared, cutoff=0.8)
            if close is None:
                continue
            reported.add(end)
            yield Diagnostic(
                "edge_target_declared",
                WARNING,
                f"{end} is declared nowhere but in edges, so it is a new stage with no attributes; "
                f"did you mean {close!r}?",
                edge=(edge.source, edge.target),
                fix=f"point the edge at {close}, or declare {end} [...] if it is a stage of its own",
            )


def name_rules(built_in_types: Collection[str]) -> tuple[FunctionRule, ...]:
    """`attribute_known` and `edge_target_declared` (both warnings)."""
    return (
        FunctionRule("attribute_known", lambda graph: check_attribute_known(graph, built_in_types)),
        FunctionRule("edge_target_declared", check_edge_target_declared),
    )
