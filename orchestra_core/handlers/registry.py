"""Handler registry (Attractor 4.2): explicit `type` first, then the shape mapping, then the default."""

from __future__ import annotations

from orchestra_core.engine.stage import Handler
from orchestra_core.model.graph import SHAPE_TO_HANDLER, Node


class HandlerRegistry:
    """Maps handler type strings to handlers; registering a type again replaces its handler."""

    def __init__(self, default_handler: Handler) -> None:
        self._handlers: dict[str, Handler] = {}
        self.default_handler = default_handler

    def register(self, type_name: str, handler: Handler) -> None:
        """Register (or replace) the handler of a type, e.g. `registry.register("deploy", DeployHandler())`."""
        if not type_name.strip():
            raise ValueError("a handler type must be a non-empty string")
        self._handlers[type_name] = handler

    def get(self, type_name: str) -> Handler | None:
        """The handler registered for a type, if any."""
        return self._handlers.get(type_name)

    @property
    def types(self) -> frozenset[str]:
        """Every registered type (what validation accepts in `type=`)."""
        return frozenset(self._handlers)

    def resolve(self, node: Node) -> Handler:
        """The node's handler: its `type` if registered, else its shape's type, else by id (start/exit),
        else the default."""
        if node.type and node.type in self._handlers:
            return self._handlers[node.type]
        shape_type = SHAPE_TO_HANDLER.get(node.shape)
        if shape_type in self._handlers and node.shape != "box":
            return self._handlers[shape_type]
        by_node = self._handlers.get(node.handler_type) if not node.type else None
        return by_node or self.default_handler
