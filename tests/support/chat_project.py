"""A project with one interactive node played by the scripted model, and readers of its conversation."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from orchestra_adapters.backends.turn_records import AgentStateRef
from orchestra_core.model.records import HumanInteraction, InteractionMode
from orchestra_core.model.turn import AgentTurn
from tests.support.orchestra_project import SCRIPTED_PROVIDER, records_of, write_files

PIPELINE = """digraph chat {
  start [shape=Mdiamond]; done [shape=Msquare]
  synth [agent.mode="interactive", prompt="Summarize the review"]
  start -> synth -> done
}
"""
DRAFTS = ("Draft one: a long summary.", "Draft two: short.", "Draft three: shorter.")


def cassette(*replies: str) -> str:
    lines = ["nodes:", "  synth:", *(f'    - content: "{reply}"' for reply in replies), 'default: "Done."']
    return "\n".join(lines) + "\n"


def chat_project(root: Path, answers: list[str] | None = None) -> Path:
    """The project: `chat.dot` (start -> synth (interactive) -> done), the cassette of DRAFTS, answers.yaml."""
    files = {"orchestra.yaml": SCRIPTED_PROVIDER, "chat.dot": PIPELINE, "cassette.yaml": cassette(*DRAFTS)}
    if answers is not None:
        quoted = ", ".join(f'"{answer}"' for answer in answers)
        files["answers.yaml"] = f"synth: [{quoted}]\n"
    write_files(root, files)
    return root


def conversation(project: Path, session: str = "1") -> list[tuple[str, str]]:
    """The session's interactive HumanInteraction turns: (agent message shown, human answer), in order."""
    found = records_of(project, session, HumanInteraction)
    assert all(record.mode is InteractionMode.INTERACTIVE for _, record in found)
    return [(record.question, record.answer or "") for _, record in found]


def agent_state(project: Path, session: str = "1") -> list[tuple[str, str]]:
    """The LangGraph conversation saved at the session's last agent turn: (role, text) of each message."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    turns = [record for _, record in records_of(project, session, AgentTurn)]
    ref = AgentStateRef.parse(turns[-1].agent_state_ref or "")
    connection = sqlite3.connect(project / ".orchestra" / "agents.db")
    try:
        saved: Any = SqliteSaver(connection).get_tuple(ref.config())
    finally:
        connection.close()
    assert saved is not None
    return [
        (message.type, str(message.content)) for message in saved.checkpoint["channel_values"]["messages"]
    ]
