"""The pipeline graph: frozen Graph, Node and Edge with typed access to every Attractor attribute.

Attribute values are kept as the strings the DOT file gave (after defaults, subgraph scoping and
transforms); the typed properties parse them on access and raise AttributeValueError for bad values.
Unknown attributes are kept unchanged in `attrs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from types import MappingProxyType
from typing import Any, TypeVar, overload

from attrs import evolve, field, frozen

from orchestra_core.model import values
from orchestra_core.model.conditions import Condition, ConditionSyntaxError, parse_condition
from orchestra_core.model.errors import AttributeValueError
from orchestra_core.model.immutable import frozen_map

T = TypeVar("T")

SHAPE_TO_HANDLER: Mapping[str, str] = MappingProxyType(
    {
        "Mdiamond": "start",
        "Msquare": "exit",
        "box": "codergen",
        "hexagon": "wait.human",
        "diamond": "conditional",
        "component": "parallel",
        "tripleoctagon": "parallel.fan_in",
        "parallelogram": "tool",
        "house": "stack.manager_loop",
    }
)
START_IDS = frozenset({"start", "Start"})
EXIT_IDS = frozenset({"exit", "Exit", "end", "End"})
FIDELITY_MODES = ("full", "truncate", "compact", "summary:low", "summary:medium", "summary:high")


def freeze_attrs(raw: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> Mapping[str, str]:
    """A read-only copy of an attribute mapping."""
    return MappingProxyType(dict(raw))


class _Attributed:
    """Typed getters over a read-only `attrs` mapping; subclasses name themselves for errors."""

    attrs: Mapping[str, str]

    def _owner(self) -> str:
        raise NotImplementedError

    def get(self, key: str, default: str = "") -> str:
        """The raw string value of an attribute, or `default` when unset."""
        return self.attrs.get(key, default)

    def _typed(self, key: str, parse: Callable[[str], T], expected: str, default: T) -> T:
        raw = self.attrs.get(key)
        if raw is None or raw == "":
            return default
        try:
            return parse(raw)
        except ValueError:
            raise AttributeValueError(self._owner(), key, raw, expected) from None

    @overload
    def get_int(self, key: str, default: int) -> int: ...
    @overload
    def get_int(self, key: str, default: None = None) -> int | None: ...
    def get_int(self, key: str, default: int | None = None) -> int | None:
        """An integer attribute (raises AttributeValueError when malformed)."""
        return self._typed(key, values.parse_int, "an integer", default)

    @overload
    def get_float(self, key: str, default: float) -> float: ...
    @overload
    def get_float(self, key: str, default: None = None) -> float | None: ...
    def get_float(self, key: str, default: float | None = None) -> float | None:
        """A number attribute (raises AttributeValueError when malformed)."""
        return self._typed(key, values.parse_float, "a number", default)

    def get_bool(self, key: str, default: bool = False) -> bool:
        """A boolean attribute (raises AttributeValueError when malformed)."""
        return self._typed(key, values.parse_bool, "a boolean (true/false)", default)

    @overload
    def get_duration(self, key: str, default: float) -> float: ...
    @overload
    def get_duration(self, key: str, default: None = None) -> float | None: ...
    def get_duration(self, key: str, default: float | None = None) -> float | None:
        """A duration attribute in seconds (raises AttributeValueError when malformed)."""
        return self._typed(key, values.parse_duration, "a duration such as 250ms, 900s, 15m, 2h or 1d", default)

    def get_list(self, key: str) -> tuple[str, ...]:
        """A comma-separated list attribute."""
        return values.parse_list(self.attrs.get(key, ""))


@frozen(eq=True, hash=False)
class Node(_Attributed):
    """A pipeline stage. `attrs` holds every attribute as given; properties give typed views."""

    id: str
    attrs: Mapping[str, str] = field(factory=freeze_attrs, converter=freeze_attrs)

    def _owner(self) -> str:
        return f"node {self.id}"

    def with_attrs(self, **updates: str) -> Node:
        """A copy with some attributes set (use `with_attrs_map` for dotted keys)."""
        return self.with_attrs_map(updates)

    def with_attrs_map(self, updates: Mapping[str, str]) -> Node:
        """A copy with the given attributes set."""
        return evolve(self, attrs={**self.attrs, **updates})

    @property
    def label(self) -> str:
        return self.attrs.get("label") or self.id

    @property
    def shape(self) -> str:
        return self.attrs.get("shape") or "box"

    @property
    def type(self) -> str:
        return self.attrs.get("type", "")

    @property
    def handler_type(self) -> str:
        """Explicit `type`, else the shape mapping (2.8), else start/exit by id, else codergen."""
        if self.type:
            return self.type
        shape = self.attrs.get("shape", "")
        if shape and shape != "box" and shape in SHAPE_TO_HANDLER:
            return SHAPE_TO_HANDLER[shape]
        if self.id in START_IDS:
            return "start"
        if self.id in EXIT_IDS:
            return "exit"
        return "codergen"

    @property
    def prompt(self) -> str:
        return self.attrs.get("prompt", "")

    @property
    def max_retries(self) -> int | None:
        return self.get_int("max_retries")

    @property
    def goal_gate(self) -> bool:
        """Whether the node is a goal gate: `goal_gate=true`, or a condition (`goal_gate_condition`)."""
        raw = self.attrs.get("goal_gate", "").strip()
        if not raw:
            return False
        try:
            return values.parse_bool(raw)
        except ValueError:
            return True

    @property
    def goal_gate_condition(self) -> Condition | None:
        """The condition of a gate given as one (`goal_gate="outcome=success && context.tests=passed"`): the gate
        is met when it holds. None for a boolean `goal_gate` (met by SUCCESS or PARTIAL_SUCCESS) or none.

        Raises:
            ConditionSyntaxError: The value is neither a boolean nor a condition (validation reports it first).
        """
        raw = self.attrs.get("goal_gate", "").strip()
        if not raw:
            return None
        try:
            values.parse_bool(raw)
        except ValueError:
            return parse_condition(raw)
        return None

    @property
    def retry_target(self) -> str:
        return self.attrs.get("retry_target", "")

    @property
    def fallback_retry_target(self) -> str:
        return self.attrs.get("fallback_retry_target", "")

    @property
    def fidelity(self) -> str:
        return self.attrs.get("fidelity", "")

    @property
    def thread_id(self) -> str:
        return self.attrs.get("thread_id", "")

    @property
    def classes(self) -> tuple[str, ...]:
        return self.get_list("class")

    @property
    def timeout(self) -> float | None:
        """Maximum execution time in seconds, or None when unset."""
        return self.get_duration("timeout")

    @property
    def llm_model(self) -> str:
        return self.attrs.get("llm_model", "")

    @property
    def llm_provider(self) -> str:
        return self.attrs.get("llm_provider", "")

    @property
    def reasoning_effort(self) -> str:
        return self.attrs.get("reasoning_effort") or "high"

    @property
    def auto_status(self) -> bool:
        return self.get_bool("auto_status")

    @property
    def allow_partial(self) -> bool:
        return self.get_bool("allow_partial")

    # Orchestra's agent attributes.
    @property
    def agent(self) -> str:
        return self.attrs.get("agent", "")

    @property
    def agent_role(self) -> str:
        return self.attrs.get("agent.role", "")

    @property
    def agent_persona(self) -> str:
        return self.attrs.get("agent.persona", "")

    @property
    def agent_personality(self) -> str:
        return self.attrs.get("agent.personality", "")

    @property
    def agent_task(self) -> str:
        return self.attrs.get("agent.task", "")

    @property
    def agent_tools(self) -> tuple[str, ...]:
        return self.get_list("agent.tools")

    @property
    def agent_mode(self) -> str:
        return self.attrs.get("agent.mode") or "autonomous"


@frozen(eq=True, hash=False)
class Edge(_Attributed):
    """A transition. Its condition is parsed once, when the edge is built."""

    source: str
    target: str
    attrs: Mapping[str, str] = field(factory=freeze_attrs, converter=freeze_attrs)
    _parsed: Condition | ConditionSyntaxError | None = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        text = self.attrs.get("condition", "")
        parsed: Condition | ConditionSyntaxError | None = None
        if text.strip():
            try:
                parsed = parse_condition(text)
            except ConditionSyntaxError as error:
                parsed = error
        object.__setattr__(self, "_parsed", parsed)

    def _owner(self) -> str:
        return f"edge {self.source} -> {self.target}"

    def with_attrs_map(self, updates: Mapping[str, str]) -> Edge:
        """A copy with the given attributes set."""
        return Edge(self.source, self.target, {**self.attrs, **updates})

    @property
    def label(self) -> str:
        return self.attrs.get("label", "")

    @property
    def condition(self) -> str:
        return self.attrs.get("condition", "")

    @property
    def condition_ast(self) -> Condition | None:
        """The parsed condition, None when the edge has none.

        Raises:
            ConditionSyntaxError: The condition does not parse (validation reports this first).
        """
        if isinstance(self._parsed, ConditionSyntaxError):
            raise self._parsed
        return self._parsed

    @property
    def condition_error(self) -> ConditionSyntaxError | None:
        return self._parsed if isinstance(self._parsed, ConditionSyntaxError) else None

    @property
    def weight(self) -> Fraction:
        """The edge's priority, as an exact number: integers as the spec has them, and the decimals other
        runners write (`2.0` is 2; `0.5` ranks between 0 and 1)."""
        return self._typed("weight", values.parse_number, "a number", Fraction(0))

    @property
    def fidelity(self) -> str:
        return self.attrs.get("fidelity", "")

    @property
    def thread_id(self) -> str:
        return self.attrs.get("thread_id", "")

    @property
    def loop_restart(self) -> bool:
        return self.get_bool("loop_restart")


def _edges(items: Iterable[Edge]) -> tuple[Edge, ...]:
    return tuple(items)


def _id_set(items: Iterable[str]) -> frozenset[str]:
    return frozenset(items)


@frozen(eq=True, hash=False)
class Graph(_Attributed):
    """A whole pipeline. Nodes keep declaration order; edges keep declaration order per source."""

    name: str
    attrs: Mapping[str, str] = field(factory=freeze_attrs, converter=freeze_attrs)
    nodes: Mapping[str, Node] = field(factory=dict, converter=frozen_map)
    edges: tuple[Edge, ...] = field(factory=tuple, converter=_edges)
    source_path: str | None = field(default=None, eq=False)
    # Ids the DOT text names only as edge ends (Graphviz creates their nodes implicitly), for validation.
    edge_only_ids: frozenset[str] = field(factory=frozenset, converter=_id_set, eq=False, repr=False)
    _outgoing: Mapping[str, tuple[Edge, ...]] = field(init=False, eq=False, repr=False)
    _incoming: Mapping[str, tuple[Edge, ...]] = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        outgoing: dict[str, list[Edge]] = {}
        incoming: dict[str, list[Edge]] = {}
        for edge in self.edges:
            outgoing.setdefault(edge.source, []).append(edge)
            incoming.setdefault(edge.target, []).append(edge)
        object.__setattr__(self, "_outgoing", {k: tuple(v) for k, v in outgoing.items()})
        object.__setattr__(self, "_incoming", {k: tuple(v) for k, v in incoming.items()})

    def _owner(self) -> str:
        return f"graph {self.name}"

    def evolve(self, **changes: Any) -> Graph:
        """A copy with fields replaced (nodes, edges, attrs)."""
        return evolve(self, **changes)

    def replace_nodes(self, nodes: Iterable[Node]) -> Graph:
        """A copy whose nodes are replaced by id (new ids are appended)."""
        merged = dict(self.nodes)
        for node in nodes:
            merged[node.id] = node
        return evolve(self, nodes=merged)

    def outgoing(self, node_id: str) -> tuple[Edge, ...]:
        """Edges leaving a node, in declaration order."""
        return self._outgoing.get(node_id, ())

    def incoming(self, node_id: str) -> tuple[Edge, ...]:
        """Edges entering a node, in declaration order."""
        return self._incoming.get(node_id, ())

    def start_nodes(self) -> list[Node]:
        """Nodes with shape Mdiamond or, when there are none, nodes with id start/Start."""
        by_shape = [n for n in self.nodes.values() if n.shape == "Mdiamond"]
        return by_shape or [n for n in self.nodes.values() if n.id in START_IDS]

    def exit_nodes(self) -> list[Node]:
        """Nodes with shape Msquare or, when there are none, nodes with id exit/end."""
        by_shape = [n for n in self.nodes.values() if n.shape == "Msquare"]
        return by_shape or [n for n in self.nodes.values() if n.id in EXIT_IDS]

    def start_node(self) -> Node | None:
        """The single start node, or None when there is not exactly one."""
        found = self.start_nodes()
        return found[0] if len(found) == 1 else None

    def is_exit(self, node: Node) -> bool:
        """Whether the node is a terminal node."""
        return node.shape == "Msquare" or node.handler_type == "exit"

    @property
    def goal(self) -> str:
        return self.attrs.get("goal", "")

    @property
    def label(self) -> str:
        return self.attrs.get("label", "")

    @property
    def model_stylesheet(self) -> str:
        """The stylesheet text; `model_spec` is accepted as an alias."""
        return self.attrs.get("model_stylesheet") or self.attrs.get("model_spec", "")

    @property
    def default_max_retries(self) -> int:
        if self.attrs.get("default_max_retries"):
            return self.get_int("default_max_retries", 0)
        return self.get_int("default_max_retry", 0)

    @property
    def retry_target(self) -> str:
        return self.attrs.get("retry_target", "")

    @property
    def fallback_retry_target(self) -> str:
        return self.attrs.get("fallback_retry_target", "")

    @property
    def default_fidelity(self) -> str:
        return self.attrs.get("default_fidelity", "")

    @property
    def stack_child_dotfile(self) -> str:
        return self.attrs.get("stack.child_dotfile", "")

    @property
    def stack_child_workdir(self) -> str:
        return self.attrs.get("stack.child_workdir", "")

    @property
    def tool_hooks_pre(self) -> str:
        return self.attrs.get("tool_hooks.pre", "")

    @property
    def tool_hooks_post(self) -> str:
        return self.attrs.get("tool_hooks.post", "")

    def tool_hooks_for(self, node: Node) -> tuple[str, str]:
        """The node's `tool_hooks.pre` and `tool_hooks.post` commands, each the graph's when the node sets none."""
        pre = node.attrs.get("tool_hooks.pre") or self.tool_hooks_pre
        post = node.attrs.get("tool_hooks.post") or self.tool_hooks_post
        return pre.strip(), post.strip()
