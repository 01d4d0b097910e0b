"""`orchestra cleanup`: remove the worktrees and session branches of finished sessions whose work is merged or
pushed, and say what stays and why."""

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from orchestra_cli.options import ConfigOption, JsonOption

_DURATION = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def cleanup(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would be removed; change nothing.")] = False,
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than", metavar="DURATION",
            help="Only sessions last active longer ago than this: 30m, 12h, 7d, 2w.",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also remove unmerged, unpushed, conflicted, interrupted and uncommitted work (unmerged heads stay "
            "reachable under refs/orchestra/abandoned/); never a running session, a protected or checked-out branch.",
        ),
    ] = False,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Remove stale session worktrees and branches; list what is kept and why.

    A session's repo is removed when its branches are merged into the repo's base ref (`base_ref`, or the checked-out
    branch) or pushed (the latest push holds the head). It is kept when its session is running, its branch is
    protected or checked out, it is too recent (--older-than), or (unless --force) it is interrupted, has a
    preserved merge conflict, uncommitted changes, or unmerged / unpushed commits. Also prunes git's records of
    worktrees whose directory is gone. Exit status 0, or 2 for bad input.
    """
    from orchestra_cli.errors import EXIT_OK, user_errors

    age = parse_age(older_than) if older_than is not None else None
    with user_errors():
        plan, checkouts = _run(config, age, force=force, dry_run=dry_run)
    _print(plan, checkouts, json_output=json_output, dry_run=dry_run)
    raise typer.Exit(EXIT_OK)


def parse_age(text: str) -> timedelta:
    """`30m`, `12h`, `7d`, `2w` as a timedelta; exit 2 with a clear message for anything else."""
    from orchestra_cli.errors import fail

    match = _DURATION.match(text)
    if match is None or int(match.group(1)) <= 0:
        raise fail(f"--older-than {text!r}: expected a positive number with a unit m, h, d or w (30m, 12h, 7d, 2w)")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def _run(config: Path | None, age: timedelta | None, *, force: bool, dry_run: bool) -> tuple[Any, list[Any]]:
    from orchestra_cli.session_commands import StoreReader
    from orchestra_core.workspace.cleanup import CleanupOptions, CleanupPlan, CleanupPlanner
    from orchestra_core.workspace.cleanup_apply import Cleanup

    reader = StoreReader(config)
    try:
        if reader.store is None:
            return CleanupPlan(), []
        container = reader.container
        settings = container.settings()
        git, locks, root = container.git(), container.session_locks(), container.project_root()
        planner = CleanupPlanner(
            reader.store, locks, git, container.clock(), settings.workspace, settings.base_dir, root
        )
        plan = Cleanup(planner, reader.store, locks, git, root).run(
            CleanupOptions(older_than=age, force=force), dry_run=dry_run
        )
        return plan, _checkouts(reader.store, git, planner.repo_roots(), root, force=force, dry_run=dry_run)
    finally:
        reader.close()


def _checkouts(store: Any, git: Any, roots: dict[str, Path], root: Path, *, force: bool, dry_run: bool) -> list[Any]:
    """The worktrees of `orchestra checkout`: removed when nobody worked in them (with --force, anyway)."""
    from orchestra_core.runs.turn_checkout import recorded_sha
    from orchestra_core.workspace.checkouts import plan_checkouts, remove_checkouts

    items = plan_checkouts(git, roots, root, lambda s, t, r: recorded_sha(store, s, t, r), force=force)
    return items if dry_run else remove_checkouts(git, roots, items)


def _print(plan: Any, checkouts: list[Any], *, json_output: bool, dry_run: bool) -> None:
    from orchestra_cli.output import print_json, print_table

    if json_output:
        print_json({**plan.to_json(), "checkouts": [item.to_json() for item in checkouts], "dry_run": dry_run})
        return
    verb = "would remove" if dry_run else "removed"
    rows = [
        [verb if item.action == "remove" else "kept", item.session_id, item.repo, ", ".join(item.branches) or "-",
         item.reason, item.detail]
        for item in [*plan.removed, *plan.kept]
    ]
    rows += [
        [verb if item.action == "remove" else "kept", item.session_id, item.repo, f"checkout of turn {item.turn_id}",
         item.reason, item.detail or str(item.path)]
        for item in checkouts
    ]
    if rows:
        print_table(["action", "session", "repo", "branches", "reason", "detail"], rows)
    else:
        print("nothing to clean up")
    for repo, path in plan.prunable:
        print(f"{'would prune' if dry_run else 'pruned'} the worktree record of {path} ({repo}): its directory is gone")
