"""ChatBox (orchestra_adapters/server/chat_box.py): the chat of a run served by `orchestra serve`."""

from __future__ import annotations

import threading
from collections.abc import Callable

from orchestra_adapters.server.chat_box import ChatBox
from orchestra_core.model.chat import ChatTurn


def _wait_for(condition: Callable[[], bool]) -> None:
    """Until `condition` holds (a guard against hanging, not a timing check: it gives up after 30 s)."""
    pause = threading.Event()
    for _ in range(3000):
        if condition():
            return
        pause.wait(0.01)
    raise AssertionError("the chat never got there")


def test_parallel_interactive_nodes_take_turns_and_each_message_reaches_the_node_shown() -> None:
    box = ChatBox()
    replies: dict[str, str] = {}

    def converse(node: str) -> None:
        replies[node] = box.reply(ChatTurn(node, f"draft of {node}"))

    threads = [threading.Thread(target=converse, args=(node,), daemon=True) for node in ("a", "b")]
    for thread in threads:
        thread.start()
    for message in ("first", "second"):
        _wait_for(lambda: box.waiting)
        shown = box.node_id
        assert shown is not None and shown not in replies
        assert box.post(f"{message} for {shown}")
        _wait_for(lambda shown=shown: shown in replies)
        assert replies[shown] == f"{message} for {shown}"
    for thread in threads:
        thread.join(timeout=30)
    assert set(replies) == {"a", "b"}
