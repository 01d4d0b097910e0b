"""Rollback on failure for library users: `run_pipeline(..., rollback_on_failure=True)` (or the
`workspace.rollback` setting) undoes a failed run's branch and worktree, and the SessionRolledBack event
reaches the subscriber and the store (issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

import orchestra_core as oc
from orchestra_adapters.container import build_container, close_container, run_arguments
from orchestra_core.model import workspace_events as ws
from tests.support.git_repos import make_repo

FAILS = """
digraph fails {
    start [shape=Mdiamond]; done [shape=Msquare]
    check [shape=parallelogram, tool_command="echo half > half.txt; exit 1"]
    start -> check -> done
}
"""


@pytest.mark.parametrize(("argument", "setting"), [(True, "never"), (None, "on_failure")])
def test_a_failed_library_run_is_rolled_back(tmp_path: Path, argument: bool | None, setting: str) -> None:
    repo = make_repo(tmp_path / "app", {"README.md": "hi\n"})
    config = {"workspace": {"repos": {"app": {"path": str(repo.path)}}, "rollback": setting}}
    container = build_container(config=config, project_root=tmp_path / "project")
    seen: list[oc.RunEvent] = []
    try:
        result = oc.run_pipeline(
            oc.parse_pipeline(FAILS), on_event=seen.append, rollback_on_failure=argument, **run_arguments(container)
        )
        recorded = oc.read_session(container.session_store(), result.session_id)
    finally:
        close_container(container)
    assert not result.succeeded
    assert repo.branches() == ["main"]
    assert repo.git("worktree", "list").count("\n") == 1
    [event] = [e for e in seen if isinstance(e, ws.SessionRolledBack)]
    # The failed tool stage committed what it made (its turn): that head is kept.
    assert (event.repo, event.abandoned_ref) == ("app", "refs/orchestra/abandoned/1/1")
    assert repo.head(event.abandoned_ref) == event.head_sha and repo.show(event.head_sha, "half.txt") == "half\n"
    assert "Orchestra-Exit-Code: 1" in repo.git("log", "-1", "--format=%B", event.head_sha)
    assert [v.record for v in recorded if isinstance(v.record, ws.SessionRolledBack)] == [
        ws.SessionRolledBack(repo="app", branch=event.branch, head_sha=event.head_sha, base_sha=event.base_sha,
                             abandoned_ref=event.abandoned_ref, level="warning")
    ]


def test_the_argument_false_overrides_the_setting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {"README.md": "hi\n"})
    config = {"workspace": {"repos": {"app": {"path": str(repo.path)}}, "rollback": "on_failure"}}
    container = build_container(config=config, project_root=tmp_path / "project")
    try:
        result = oc.run_pipeline(oc.parse_pipeline(FAILS), rollback_on_failure=False, **run_arguments(container))
    finally:
        close_container(container)
    assert not result.succeeded and len(repo.branches()) == 2
