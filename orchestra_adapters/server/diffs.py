"""What an agent changed, for the web view: a turn's diff with its messages and tool calls, a node's diff over all
its turns, and the session's whole diff against its base, read from the workspace repos through the git adapter
(commits named by the store, checked to be SHAs; paths only after `--`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestra_adapters.server.diff_text import file_from_diff, parse_diff
from orchestra_adapters.server.service import PipelineService, RequestError
from orchestra_adapters.server.session_index import SessionIndexes

MAX_LINES = 3000  # the lines of one answer over all its files; the rest come a file at a time
MAX_FILE_LINES = 20_000  # a file asked for alone; past that, the page links to the file
MAX_TEXT = 20_000  # characters of one message, argument or result
MAX_LOG = 5000  # commits read to join a node's commits into ranges
MAX_RANGES = 40  # a node's diffs in one answer: its latest ranges
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_SHA = re.compile(r"^[0-9a-f]{4,64}$")


def session_store(service: PipelineService, session_id: str) -> Any:
    """The store holding session `session_id` (404 when it has none)."""
    from orchestra_core.model.store_errors import SessionNotFoundError

    store = service.store
    if store is None:
        raise RequestError(404, f"no session {session_id!r}")
    try:
        store.get_session(session_id)
    except SessionNotFoundError:
        raise RequestError(404, f"no session {session_id!r}") from None
    return store


def _repo_root(service: PipelineService, repo: str) -> Path | None:
    """The checkout of workspace repo `repo` (`""`, a single-repo record: the only repo), None when unknown."""
    from orchestra_core.workspace.setup import configured_path

    settings = service.container.settings()
    repos = settings.workspace.repos
    if not repo and len(repos) == 1:
        repo = next(iter(repos))
    found = repos.get(repo)
    if found is None:
        return None
    root = configured_path(found, settings.base_dir)
    return root if root.is_dir() else None


def _checked(sha: str | None) -> str:
    if sha is None or not _SHA.match(sha):
        raise RequestError(422, f"the store names a commit {sha!r} that is not a SHA")
    return sha


def _section(
    service: PipelineService, title: str, repo: str, base: str, head: str, path: str | None, budget: int
) -> dict[str, Any]:
    """One diff between two commits of a repo: its files within `budget` lines (one file with `path`)."""
    root = _repo_root(service, repo)
    section: dict[str, Any] = {"title": title, "repo": repo, "base": base, "head": head, "files": [], "error": None}
    if root is None:
        section["error"] = f"no workspace repo {repo!r} here (workspace.repos in orchestra.yaml)"
        return section
    from orchestra_core.ports.git import GitError

    git = service.container.git()
    try:
        text = git.diff(root, _checked(base), _checked(head), paths=[path] if path is not None else [])
    except GitError as error:
        section["error"] = f"git cannot diff {base[:12]}..{head[:12]} in {repo}: {error}"
        return section
    section["files"] = [file.to_json() for file in parse_diff(text, budget)]
    return section


def _budget_left(sections: list[dict[str, Any]], budget: int) -> int:
    return budget - sum(len(file["lines"]) for section in sections for file in section["files"])


def _document(scope: str, sections: list[dict[str, Any]], path: str | None) -> dict[str, Any]:
    return {"scope": scope, "path": path, "sections": sections, "max_lines": MAX_FILE_LINES if path else MAX_LINES}


def session_diff(service: PipelineService, session_id: str, path: str | None) -> dict[str, Any]:
    """The session's whole diff: per workspace repo, its base against its session branch's head."""
    from orchestra_core.session.recent import RecentLimits, recent_session_summary

    store = session_store(service, session_id)
    header = recent_session_summary(
        store, session_id, service.locks, limits=RecentLimits(node_runs=0, agent_turns=0, checkpoints=0)
    )
    budget = MAX_FILE_LINES if path else MAX_LINES
    sections: list[dict[str, Any]] = []
    for repo in header.repos:
        title = f"{repo.name}: {repo.branch or 'session branch'} against its base"
        sections.append(
            _section(service, title, repo.name, repo.base_sha or EMPTY_TREE, repo.head_sha, path,
                     _budget_left(sections, budget))
        )
    return _document("session", sections, path)


def turn_diff(service: PipelineService, session_id: str, turn_id: str, path: str | None) -> dict[str, Any]:
    """A turn's commits, each against its first parent, and the turn: messages, tool calls, model, usage."""
    from orchestra_core.model.turn import AgentTurn
    from orchestra_core.session.codec import decode_record
    from orchestra_core.session.pages import PageError, checked_after, run_lines

    store = session_store(service, session_id)
    lines = run_lines(store, session_id)
    try:
        found = checked_after(store, lines, turn_id)
    except PageError as error:
        raise RequestError(404, str(error)) from None
    stored = next(_turn_of(store, lines, str(found)))
    record = decode_record(stored)
    if not isinstance(record, AgentTurn):
        raise RequestError(400, f"turn {turn_id} is not an agent turn")
    git = service.container.git()
    budget = MAX_FILE_LINES if path else MAX_LINES
    sections: list[dict[str, Any]] = []
    for commit in _commits_of(record):
        root = _repo_root(service, commit.repo)
        parent = _parent(git, root, _checked(commit.sha)) if root is not None else EMPTY_TREE
        title = f"{commit.repo or 'repo'}: {commit.sha[:12]} {commit.message.split(chr(10))[0]}"
        sections.append(
            _section(service, title, commit.repo, parent, commit.sha, path, _budget_left(sections, budget))
        )
    document = _document("turn", sections, path)
    document["turn"] = turn_json(record, stored.turn_id)
    return document


def _turn_of(store: Any, lines: list[tuple[str, str | None]], turn_id: str) -> Any:
    from orchestra_core.model.store_errors import TurnNotFoundError

    for line_id, _branch in lines:
        try:
            yield store.get_turn(line_id, turn_id)
        except TurnNotFoundError:
            continue


def _commits_of(record: Any) -> tuple[Any, ...]:
    from orchestra_core.model.turn import TurnCommit

    if record.commits or not record.git_sha:
        return tuple(record.commits)
    return (TurnCommit("", record.git_sha, record.commit_message or ""),)


def _parent(git: Any, root: Path, sha: str) -> str:
    entries = git.log(root, sha, max_count=1)
    return entries[0].parents[0] if entries and entries[0].parents else EMPTY_TREE


def node_diff(
    service: PipelineService, indexes: SessionIndexes, session_id: str, node_id: str, path: str | None
) -> dict[str, Any]:
    """A node's diff over all its agent turns: per repo, each unbroken run of its commits as one diff."""
    store = session_store(service, session_id)
    commits = indexes.read(store, session_id, lambda index: list(index.node(node_id).commits)
                           if node_id in index.nodes else None)
    if commits is None:
        raise RequestError(404, f"no node {node_id!r} has run in session {session_id}")
    by_repo: dict[str, list[str]] = {}
    for _turn, repo, sha in commits:
        if sha not in by_repo.setdefault(repo, []):
            by_repo[repo].append(_checked(sha))
    budget = MAX_FILE_LINES if path else MAX_LINES
    sections: list[dict[str, Any]] = []
    omitted = 0
    for repo, shas in by_repo.items():
        root = _repo_root(service, repo)
        ranges = commit_ranges(service.container.git(), root, shas) if root is not None else [(EMPTY_TREE, shas[-1], 1)]
        omitted += max(len(ranges) - MAX_RANGES, 0)
        for base, head, count in ranges[-MAX_RANGES:]:
            title = f"{repo or 'repo'}: {node_id}, {count} commit{'s' if count != 1 else ''} ({head[:12]})"
            sections.append(_section(service, title, repo, base, head, path, _budget_left(sections, budget)))
    return {**_document("node", sections, path), "omitted_ranges": omitted}


def commit_ranges(git: Any, root: Path, shas: list[str]) -> list[tuple[str, str, int]]:
    """The node's commits (in append order) as `(base, head, commits)` ranges: each unbroken run of them on one
    line of history, the commits of other nodes between runs left out."""
    wanted = set(shas)
    first = git.log(root, shas[0], max_count=1)
    start = first[0].parents[0] if first and first[0].parents else None
    span = git.log(root, f"{start}..{shas[-1]}" if start else shas[-1], max_count=MAX_LOG)
    ranges: list[tuple[str, str, int]] = []
    current: list[Any] | None = None
    for entry in reversed(span):  # oldest first
        if entry.sha in wanted:
            if current is None:
                current = [entry.parents[0] if entry.parents else EMPTY_TREE, entry.sha, 1]
            else:
                current[1], current[2] = entry.sha, current[2] + 1
        elif current is not None:
            ranges.append((current[0], current[1], current[2]))
            current = None
    if current is not None:
        ranges.append((current[0], current[1], current[2]))
    seen = {entry.sha for entry in span}
    unseen = [sha for sha in shas if sha not in seen][-MAX_RANGES:]  # past MAX_LOG, or on another line
    return [(_parent(git, root, sha), sha, 1) for sha in unseen] + ranges


def file_text(service: PipelineService, session_id: str, repo: str, sha: str, path: str) -> str:
    """A file of a workspace repo at a commit of the session (read as its diff against the empty tree)."""
    from orchestra_core.ports.git import GitError

    session_store(service, session_id)
    if not _SHA.match(sha):
        raise RequestError(400, f"{sha!r} is not a commit SHA (4 to 64 lower-case hex digits)")
    root = _repo_root(service, repo)
    if root is None:
        raise RequestError(404, f"no workspace repo {repo!r}")
    try:
        text = service.container.git().diff(root, EMPTY_TREE, sha, paths=[path])
    except GitError:
        raise RequestError(404, f"no commit {sha} in {repo}") from None
    if not text:
        raise RequestError(404, f"no file {path!r} at {sha[:12]} in {repo}")
    content = file_from_diff(text)
    if content is None:
        raise RequestError(415, f"{path} is a binary file")
    return content


def turn_json(record: Any, turn_id: str) -> dict[str, Any]:
    """An agent turn for the diff view: who, usage, its messages and tool calls (long texts cut)."""
    from orchestra_core.model.money import money_json
    from orchestra_core.session.turn_view import turn_cost

    usage = record.token_usage
    return {
        "turn_id": turn_id,
        "node_id": record.node_id,
        "turn_number": record.turn_number,
        "model": record.model,
        "provider": record.provider,
        "duration_s": record.duration_s,
        "tokens": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
        "cost_usd": money_json(turn_cost(record)),
        "files_written": list(record.files_written),
        "messages": [_message(message) for message in record.messages],
        "tool_calls": [
            {
                "name": call.name,
                "args": {str(key): _cut(value) for key, value in call.args.items()},
                "result": None if call.result is None else _cut(call.result),
                "error": None if call.error is None else _cut(call.error),
            }
            for call in record.tool_calls
        ],
    }


def _message(message: Any) -> dict[str, Any]:
    content = message.get("content", "")
    if isinstance(content, list):  # content blocks: their text parts
        content = "\n".join(str(block.get("text", "")) for block in content if isinstance(block, Mapping))
    calls = [str(call.get("name", "?")) for call in message.get("tool_calls") or () if isinstance(call, Mapping)]
    return {"role": str(message.get("role", "?")), "content": _cut(content), "tool_calls": calls}


def _cut(value: Any) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"
