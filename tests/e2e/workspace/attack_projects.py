"""A project whose scripted agent makes the tool calls an attacker would, run through `orchestra run --json`;
what the agent was told for each call (result or tool error) is read back from the session's turns."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.turn import AgentTurn
from orchestra_core.session.api import history
from orchestra_core.session.codec import decode_record
from tests.support.git_repos import git
from tests.support.orchestra_project import agent_turns, orchestra

PIPELINE = """digraph attack {
    start [shape=Mdiamond]; exit [shape=Msquare]
    work [prompt="Do the work", agent.tools="%s"]
    start -> work -> exit
}
"""


def write(path: str, content: str = "x") -> dict[str, Any]:
    return {"name": "project:write-file", "args": {"path": path, "content": content}}


def call(tool: str, **args: str) -> dict[str, Any]:
    return {"name": f"project:{tool}", "args": args}


@frozen
class Answer:
    """What one tool call told the agent."""

    args: Mapping[str, Any]
    error: str | None
    result: str | None


@frozen
class AttackRun:
    root: Path
    document: dict[str, Any]
    answers: list[Answer]

    @property
    def branch(self) -> str:
        return str(self.document["repos"]["project"]["branch"])

    def git(self, *args: str) -> str:
        return git(self.root, *args)


def attack_project(
    root: Path,
    files: Mapping[str, str],
    calls: Sequence[Mapping[str, Any]],
    *,
    isolation: str = "in_place",
    tools: Mapping[str, Any] | None = None,
    repo_path: str = ".",
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """The project at `root` (orchestra.yaml, pipeline.dot, cassette.yaml beside `files`); no git yet."""
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    turns = [{"content": f"attempt {n}", "tool_calls": [c]} for n, c in enumerate(calls)]
    cassette = {"nodes": {"work": [*turns, {"content": "done"}]}, "commit_messages": ["Agent work"] * len(calls)}
    (root / "cassette.yaml").write_text(json.dumps(cassette), encoding="utf-8")
    config: dict[str, Any] = {
        "providers": {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}},
        "backend": "langgraph",
        "workspace": {"repos": {"project": {"path": repo_path, "isolation": isolation}}},
        **(extra or {}),
    }
    if tools:
        config["workspace"]["tools"] = {"project": dict(tools)}
    (root / "orchestra.yaml").write_text(json.dumps(config), encoding="utf-8")
    (root / "pipeline.dot").write_text(PIPELINE % ",".join(f"project:{name}" for name in tools or {}), encoding="utf-8")
    return root


def commit_all(repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Start")


def run_attack(root: Path, *args: str, store: Path | None = None) -> AttackRun:
    """`orchestra run pipeline.dot --json` in `root`: it succeeds, the agent's calls were answered (read from
    the project's store, or the SQLite file `store`)."""
    ran = orchestra("run", "pipeline.dot", "--json", *args, cwd=root)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    document = json.loads(ran.stdout)
    turns = _turns(store, document["session_id"]) if store else [t for _, t in agent_turns(root, document["session_id"])]
    answers = [Answer(call.args, call.error, call.result) for turn in turns for call in turn.tool_calls]
    return AttackRun(root, document, answers)


def _turns(store: Path, session_id: str) -> list[AgentTurn]:
    opened = SqliteSessionStore(store)
    try:
        records = [decode_record(turn) for turn in reversed(list(history(opened, session_id)))]
    finally:
        opened.close()
    return [record for record in records if isinstance(record, AgentTurn)]
