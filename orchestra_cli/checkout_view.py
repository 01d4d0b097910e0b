"""`orchestra checkout`: find the turn, resolve each repo's commit, add the worktrees, print them and the turn."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from orchestra_cli.errors import EXIT_OK, fail, user_errors

_SOURCES = {"turn": "the turn's commit", "earlier": "latest commit before the turn", "checkpoint": "head at the last checkpoint"}


def checkout(session: str, turn_id: str, repo: str | None, *, json_output: bool, config: Path | None) -> int:
    """Check the turn's code out and print it; returns the exit code (bad input exits 2 by raising)."""
    from orchestra_cli.session_commands import StoreReader
    from orchestra_core.runs.turn_checkout import check_out, checkout_dir, code_at_turn, find_agent_turn

    with user_errors():
        reader = StoreReader(config)
        try:
            store = reader.require(session)
            found = find_agent_turn(store, session, turn_id)
            code = code_at_turn(store, found)
            if repo is not None:
                if repo not in code:
                    known = ", ".join(code) or "none"
                    raise fail(f"repo {repo!r} is not a workspace repo of session {session} (its repos: {known})")
                code = {repo: code[repo]}
            container = reader.container
            root = container.project_root()
            paths = check_out(container.git(), _repo_roots(container), checkout_dir(root, found), code)
        finally:
            reader.close()
    if json_output:
        _print_json(found, code, paths)
    else:
        _print_text(found, code, paths, shorten=sys.stdout.isatty())
    return EXIT_OK


def _repo_roots(container: Any) -> dict[str, Path]:
    """Each configured workspace repo's directory (as orchestra.yaml names it)."""
    from orchestra_core.workspace.setup import configured_path

    settings = container.settings()
    return {name: configured_path(repo, settings.base_dir) for name, repo in settings.workspace.repos.items()}


def _print_json(found: Any, code: dict[str, Any], paths: dict[str, Path]) -> None:
    from orchestra_cli.commit_view import turn_json
    from orchestra_cli.output import print_json

    print_json(
        {
            "session_id": found.asked_session_id,
            "worktrees": {name: str(path) for name, path in paths.items()},
            "commits": {name: {"sha": at.sha, "source": at.source} for name, at in code.items()},
            "turn": turn_json(found.record, found.turn, found.session_id),
        }
    )


def _print_text(found: Any, code: dict[str, Any], paths: dict[str, Path], *, shorten: bool) -> None:
    from orchestra_cli.commit_view import message_lines, tool_call_lines
    from orchestra_cli.output import print_table

    record = found.record
    where = f", in the parallel branch's session {found.session_id}" if found.in_branch else ""
    print(
        f"session {found.asked_session_id}, turn {found.turn.turn_id}: {record.node_id} #{record.turn_number} "
        f"({record.model}, provider {record.provider}){where}"
    )
    rows = [[name, str(paths[name]), at.sha[:12], _SOURCES.get(at.source, at.source)] for name, at in code.items()]
    if rows:
        print_table(["repo", "worktree", "commit", "which"], rows)
        print("detached HEADs: nothing you commit there moves a branch; `orchestra cleanup` removes these worktrees")
    else:
        print("the session records no workspace repo (workspace.repos): no code to check out")
    for line in [*message_lines(record, shorten), *tool_call_lines(record, shorten)]:
        print(line)
