"""RoutingBackend: each node runs with the backend its `backend` attribute names, each built once per run."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from orchestra_adapters.backends.registry import UnknownBackendError
from orchestra_adapters.backends.routing import RoutingBackend, node_backend, simulated_response
from orchestra_core.model.context import Context
from orchestra_core.model.graph import Node


class StandIn:
    """A backend that answers with its name and remembers its calls."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[str, Any]] = []
        self.closed = 0

    def run(self, node: Node, prompt: str, context: Context, on_turn: Any = None) -> str:
        self.calls.append((node.id, on_turn))
        return f"{self.name} did {node.id}"

    def close(self) -> None:
        self.closed += 1


class Builder:
    def __init__(self) -> None:
        self.built: dict[str, StandIn] = {}
        self.order: list[str] = []

    def __call__(self, name: str) -> StandIn:
        if name not in ("langgraph", "claude-code", "codex", "direct"):
            raise UnknownBackendError(f"unknown backend {name!r}")
        self.order.append(name)
        self.built[name] = StandIn(name)
        return self.built[name]


def _node(node_id: str, backend: str | None = None) -> Node:
    return Node(node_id, {"backend": backend} if backend is not None else {})


def test_nodes_run_with_their_own_backend_else_the_runs_each_built_once_on_first_use() -> None:
    build = Builder()
    routing = RoutingBackend("langgraph", build)
    assert routing.built == ()
    on_turn = object()
    assert routing.run(_node("plan"), "p", Context()) == "langgraph did plan"
    assert (
        routing.run(_node("implement", "claude-code"), "p", Context(), on_turn) == "claude-code did implement"
    )
    assert routing.run(_node("review"), "p", Context()) == "langgraph did review"
    assert routing.run(_node("fix", "claude-code"), "p", Context()) == "claude-code did fix"
    assert build.order == ["langgraph", "claude-code"] and routing.built == ("langgraph", "claude-code")
    assert build.built["claude-code"].calls == [("implement", on_turn), ("fix", None)]


def test_simulate_answers_as_the_codergen_handler_does_without_a_backend() -> None:
    build = Builder()
    routing = RoutingBackend("simulate", build)
    routing.prepare()
    assert routing.run(_node("plan"), "p", Context()) == "[Simulated] Response for stage: plan"
    assert routing.run(_node("implement", "codex"), "p", Context()) == "codex did implement"
    assert routing.run(_node("check", "simulate"), "p", Context()) == simulated_response(_node("check"))
    assert build.order == ["codex"]


def test_prepare_builds_the_runs_backend_now_and_fails_there() -> None:
    build = Builder()
    RoutingBackend("direct", build).prepare()
    assert build.order == ["direct"]
    with pytest.raises(UnknownBackendError, match="nope"):
        RoutingBackend("nope", build).prepare()


def test_an_unknown_node_backend_fails_that_node() -> None:
    routing = RoutingBackend("langgraph", Builder())
    with pytest.raises(UnknownBackendError, match="'claude'"):
        routing.run(_node("implement", "claude"), "p", Context())


def test_close_closes_every_built_backend_once_even_when_one_fails() -> None:
    build = Builder()
    routing = RoutingBackend("langgraph", build)
    routing.run(_node("a"), "p", Context())
    routing.run(_node("b", "codex"), "p", Context())

    def broken() -> None:
        raise RuntimeError("close failed")

    build.built["langgraph"].close = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="close failed"):
        routing.close()
    assert build.built["codex"].closed == 1
    routing.close()
    assert build.built["codex"].closed == 1


def test_parallel_branches_asking_at_once_share_one_backend() -> None:
    build = Builder()
    routing = RoutingBackend("simulate", build)
    barrier = threading.Barrier(8)

    def branch(index: int) -> None:
        barrier.wait()
        routing.run(_node(f"n{index}", "claude-code"), "p", Context())

    threads = [threading.Thread(target=branch, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert build.order == ["claude-code"] and len(build.built["claude-code"].calls) == 8


@pytest.mark.parametrize(
    ("attrs", "expected"), [({}, None), ({"backend": ""}, None), ({"backend": " codex "}, "codex")]
)
def test_node_backend_reads_the_attribute(attrs: dict[str, str], expected: str | None) -> None:
    assert node_backend(Node("n", attrs)) == expected


class ShellStandIn(StandIn):
    def gives_agents_a_shell(self, node: Node) -> bool:
        return True


def test_a_node_whose_backend_is_a_cli_agent_gets_a_shell() -> None:
    built = {"langgraph": StandIn("langgraph"), "claude-code": ShellStandIn("claude-code")}
    routing = RoutingBackend("langgraph", built.__getitem__)
    assert routing.gives_agents_a_shell(Node("n", {"backend": "claude-code"}))
    assert not routing.gives_agents_a_shell(Node("n"))
    assert not RoutingBackend("simulate", built.__getitem__).gives_agents_a_shell(Node("n"))


class LiveStandIn(StandIn):
    """A backend that tells its live activity."""

    def run(self, node: Node, prompt: str, context: Context, on_turn: Any = None, *, on_activity: Any = None) -> str:
        on_activity(f"{self.name} working on {node.id}")
        return super().run(node, prompt, context, on_turn)


def test_on_activity_reaches_a_backend_that_takes_it_and_no_other() -> None:
    heard: list[str] = []
    routing = RoutingBackend("langgraph", lambda name: LiveStandIn(name) if name == "codex" else StandIn(name))
    assert routing.run(_node("plan"), "p", Context(), on_activity=heard.append) == "langgraph did plan"
    assert routing.run(_node("fix", "codex"), "p", Context(), on_activity=heard.append) == "codex did fix"
    assert heard == ["codex working on fix"]
