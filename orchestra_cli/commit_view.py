"""How `orchestra show` prints a traced commit: aligned text (long values shortened on a terminal) or JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from orchestra_cli.commit_trace import TracedCommit
from orchestra_core.model.turn import AgentTurn, ToolCall, TurnCommit
from orchestra_core.ports.session_store import StoredTurn

MAX_LINES = 8
MAX_CHARS = 400
_INDENT = "  "


def show_json(traced: TracedCommit) -> dict[str, Any]:
    """The `orchestra show --json` document: every value in full."""
    commit, record, turn = traced.commit, traced.found.record, traced.found.turn
    own = _own_commit(traced)
    return {
        "commit": {
            "sha": commit.sha,
            "repo": own.repo if own else None,
            "repo_root": str(commit.repo_root),
            "branch": own.branch if own else None,
            "author": commit.entry.author_name,
            "author_email": commit.entry.author_email,
            "authored_at": commit.entry.authored_at,
            "subject": commit.entry.subject,
            "message": commit.entry.message,
            "files": [{"path": change.path, "status": change.status} for change in commit.files],
            "trailers": traced.trailers.to_json(),
        },
        "project": str(traced.project_root),
        "store": traced.store_location,
        "session": {
            "session_id": traced.session.session_id,
            "pipeline": traced.session.metadata.pipeline,
            "title": traced.session.metadata.title,
            "status": traced.session.status.value,
        },
        "turn": {
            **turn_json(record, turn, traced.found.session_id),
            "matched": "sha" if traced.found.exact else "trailers",
            "also_matches": list(traced.others),
        },
    }


def turn_json(record: AgentTurn, turn: StoredTurn, session_id: str) -> dict[str, Any]:
    """An agent turn as `show --json` and `checkout --json` give it: every value in full."""
    return {
        "turn_id": turn.turn_id,
        "session_id": session_id,
        "node_id": record.node_id,
        "turn_number": record.turn_number,
        "model": record.model,
        "provider": record.provider,
        "created_at": turn.created_at.isoformat() if turn.created_at else None,
        "duration_s": record.duration_s,
        "token_usage": {
            "prompt_tokens": record.token_usage.prompt_tokens,
            "completion_tokens": record.token_usage.completion_tokens,
        },
        "agent_state_ref": record.agent_state_ref,
        "files_written": list(record.files_written),
        "untracked": record.untracked,
        "commits": [_commit_json(c) for c in record.commits],
        "messages": [_plain(dict(message)) for message in record.messages],
        "tool_calls": [_call_json(call) for call in record.tool_calls],
    }


def show_text(traced: TracedCommit, *, shorten: bool) -> list[str]:
    """The lines `orchestra show` prints; `shorten` cuts long messages, arguments and results."""
    record = traced.found.record
    return [
        *_header(traced), *_trace_hints(traced), *message_lines(record, shorten), *tool_call_lines(record, shorten)
    ]


def _trace_hints(traced: TracedCommit) -> list[str]:
    """The commands that go on from this turn: its code checked out, and (a main-line turn) resume or replay."""
    session, turn_id = traced.session.session_id, traced.found.turn.turn_id
    hints = [f"orchestra checkout {session} --turn {turn_id}   (the code and reasoning at this turn)"]
    if traced.found.session_id == session:
        hints.append(f"orchestra replay {session} --turn {turn_id}     (a new session going on from this turn)")
    return _labelled("next", hints)


def _header(traced: TracedCommit) -> list[str]:
    commit, session, found = traced.commit, traced.session, traced.found
    record, own = found.record, _own_commit(traced)
    title = f"  {session.metadata.title}" if session.metadata.title else ""
    where = f"turn id {found.turn.turn_id}"
    if found.session_id != session.session_id:
        where += f", in the parallel branch's session {found.session_id}"
    usage = record.token_usage
    lines = [
        f"commit   {commit.sha[:12]}  {commit.entry.subject}",
        f"author   {commit.entry.author_name} <{commit.entry.author_email}>  {commit.entry.authored_at}",
        f"repo     {own.repo + '  ' if own and own.repo else ''}{commit.repo_root}"
        + (f"  (branch {own.branch})" if own and own.branch else ""),
        *_labelled("files", [f"{change.status} {change.path}" for change in commit.files] or ["(none)"]),
        f"session  {session.session_id}  ({session.status.value}){title}",
        f"pipeline {session.metadata.pipeline or traced.trailers.pipeline or '?'}",
        f"store    {traced.store_location}  (project {traced.project_root})",
        f"node     {record.node_id}",
        f"turn     {record.turn_number}  ({where})",
        f"model    {record.model}  (provider {record.provider})",
        f"usage    {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
        f"{record.duration_s:.2f} s",
    ]
    if record.agent_state_ref:
        lines.append(f"state    {record.agent_state_ref}")
    if record.untracked or traced.trailers.untracked:
        lines.append(
            "warning  untracked: these changes were found in the worktree after the agent's turn, not made "
            "through Orchestra's tools (Orchestra-Untracked: true)"
        )
    others = [c for c in record.commits if c.sha != commit.sha and c is not own]
    lines += _labelled(
        "also", [f"{c.repo} {c.sha[:12]}" + (f"  (branch {c.branch})" if c.branch else "") for c in others]
    )
    if not found.exact:
        recorded = f" (recorded as {own.sha[:12]})" if own else ""
        lines.append(
            f"note     this commit is a copy of the recorded one{recorded}: rebased, amended or cherry-picked; "
            "matched by its node, turn and subject"
        )
    if traced.others:
        lines += _labelled(
            "note", ["the same node, turn and subject were also recorded by", *(f"  {o}" for o in traced.others)]
        )
    return lines


def message_lines(record: AgentTurn, shorten: bool) -> list[str]:
    """The turn's messages (what it was told, what it said), tool results left to `tool_call_lines`."""
    lines = ["", "messages"]
    shown = 0
    for message in record.messages:
        role = str(message.get("role", "?"))
        if role == "tool":
            continue  # shown with their calls below
        calls = [
            str(call.get("name", "?"))
            for call in message.get("tool_calls") or ()
            if isinstance(call, Mapping)
        ]
        suffix = f"  [calls {', '.join(calls)}]" if calls else ""
        lines += _block(f"{role}:", str(message.get("content", "")) + suffix, shorten)
        shown += 1
    return lines if shown else [*lines, f"{_INDENT}(none)"]


def tool_call_lines(record: AgentTurn, shorten: bool) -> list[str]:
    """The turn's tool calls with their arguments and results (or errors)."""
    calls = record.tool_calls
    lines = ["", "tool calls"]
    if not calls:
        return [*lines, f"{_INDENT}(none)"]
    for call in calls:
        lines.append(f"{_INDENT}{call.name}")
        for key, value in call.args.items():
            lines += _block(f"  {key}:", _text(value), shorten)
        if call.error is not None:
            lines += _block("  error:", call.error, shorten)
        elif call.result is not None:
            lines += _block("  result:", call.result, shorten)
    return lines


def _block(label: str, text: str, shorten: bool) -> list[str]:
    """`label text` with continuation lines indented under the text."""
    first, *rest = clip(text.rstrip("\n"), shorten=shorten).split("\n")
    pad = " " * (len(_INDENT) + len(label) + 1)
    return [f"{_INDENT}{label} {first}".rstrip(), *(f"{pad}{line}".rstrip() for line in rest)]


def clip(text: str, *, shorten: bool) -> str:
    """`text`, or on a terminal its first MAX_LINES lines / MAX_CHARS characters and how much was left out."""
    lines = text.split("\n")
    if not shorten or (len(lines) <= MAX_LINES and len(text) <= MAX_CHARS):
        return text
    kept = "\n".join(lines[:MAX_LINES])[:MAX_CHARS]
    return f"{kept} … ({len(text) - len(kept)} more characters; --json shows all)"


def _labelled(label: str, values: list[str]) -> list[str]:
    return [f"{(label if index == 0 else ''):<9}{value}" for index, value in enumerate(values)]


def _own_commit(traced: TracedCommit) -> TurnCommit | None:
    """The turn's commit this one is: the same SHA, or for a copy, the same subject."""
    commits = traced.found.record.commits
    subject = traced.commit.entry.subject.strip()
    return next((c for c in commits if c.sha == traced.commit.sha), None) or next(
        (c for c in commits if c.message.split("\n", 1)[0].strip() == subject), None
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(_plain(value), ensure_ascii=False)


def _commit_json(commit: TurnCommit) -> dict[str, str]:
    return {"repo": commit.repo, "sha": commit.sha, "branch": commit.branch, "message": commit.message}


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "call_id": call.call_id,
        "args": _plain(dict(call.args)),
        "result": call.result,
        "error": call.error,
    }


def _plain(value: Any) -> Any:
    """Mappings and sequences as JSON objects and arrays (stored values may be read-only views or tuples)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
