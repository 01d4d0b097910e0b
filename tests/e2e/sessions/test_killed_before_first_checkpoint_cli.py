"""A run killed before its first checkpoint (SIGKILL, SIGTERM, or Ctrl-C) while it sets up its workspace is
`interrupted`, never left `new`; `status`, `status --json`, `attach`, `cleanup --dry-run`, `replay` and the web
view's server all say the same thing about it (`orchestra resume N` starts it again from the beginning), and
`resume` does just that: same session, its recorded session branch at its recorded base, the `--set` values it was
started with, to success.

The run is held at a real point of its start-up by a `git` on PATH that runs the real git, then waits while a gate
file exists: after `git worktree add` made the session worktree (nothing recorded of it yet: the resume removes
what the dead run left and sets up again), or at the repo -> project link right after the session branch was
recorded (the resume reuses that branch).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orchestra_adapters.server.app import create_app
from orchestra_adapters.server.service import PipelineService
from orchestra_core.model import records as r
from orchestra_core.model import workspace_events as w
from tests.support.git_repos import make_repo
from tests.support.orchestra_project import ORCHESTRA, orchestra, records_of, run_json
from tests.support.processes import wait_until
from tests.support.server import LOCAL

pytestmark = pytest.mark.slow

PIPELINE = """digraph killed {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [shape=parallelogram, tool_command="echo worked > worked.txt"]
    start -> work -> done
}
"""
CONFIG = "sandbox:\n  kind: none\nworkspace:\n  repos:\n    project:\n      path: .\n"
HELD_GIT = """#!/bin/sh
"$REAL_GIT" "$@"
status=$?
case "$*" in
  *"$HOLD_GIT_WHEN"*)
    if [ -e "$HOLD_GIT_GATE" ]; then
      touch "$HOLD_GIT_GATE.reached"
      while [ -e "$HOLD_GIT_GATE" ]; do sleep 0.05; done
    fi ;;
esac
exit $status
"""
# Where the run is held: right after the session worktree was made (not recorded yet), or after the session branch
# was recorded (the project link follows it).
HOLD_AT = {"worktree-made": "worktree add", "branch-recorded": "orchestra.project"}


def held_environment(tmp_path: Path, when: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(HELD_GIT, encoding="utf-8")
    wrapper.chmod(0o755)
    real = shutil.which("git")
    assert real is not None
    return {
        **os.environ, "NO_COLOR": "1", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "REAL_GIT": real,
        "HOLD_GIT_WHEN": HOLD_AT[when], "HOLD_GIT_GATE": str(tmp_path / "gate"),
    }  # fmt: skip


def kill_while_held(root: Path, env: dict[str, str], gate: Path, sig: signal.Signals) -> tuple[int, str]:
    """`orchestra run` held at its start-up, then sent `sig` (the runner alone, not its process group); its exit
    status and standard error."""
    gate.touch()
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "killed.dot", "--set", "who=ada"], cwd=root, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        reached = Path(f"{gate}.reached")
        assert wait_until(lambda: reached.exists() or runner.poll() is not None, 60), "never held"
        assert runner.poll() is None, runner.communicate()
        os.kill(runner.pid, sig)
        _, stderr = runner.communicate(timeout=30)
    finally:
        gate.unlink(missing_ok=True)  # lets the held git (orphaned by a kill) end
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    return runner.returncode, stderr.decode()


@pytest.mark.parametrize("when", list(HOLD_AT))
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_run_killed_before_its_first_checkpoint_is_interrupted_and_resumes_from_the_beginning(
    tmp_path: Path, when: str, sig: signal.Signals
) -> None:
    root = tmp_path / "project"
    repo = make_repo(root, {"orchestra.yaml": CONFIG, "killed.dot": PIPELINE})
    base = repo.head()
    code, stderr = kill_while_held(root, held_environment(tmp_path, when), tmp_path / "gate", sig)
    [listed] = run_json("status", cwd=root)["sessions"]
    session = str(listed["session_id"])
    advice = f"`orchestra resume {session}` starts it again from the beginning (it stopped before its first checkpoint)"
    if sig is signal.SIGINT:  # Ctrl-C: the run records its interruption and says how to go on
        assert code == 130 and f"orchestra: interrupted; continue with: orchestra resume {session}" in stderr, stderr
    else:
        assert code == -sig, stderr

    # status: the list, one session (text and JSON) all say interrupted, and what resume does
    assert listed["status"] == "interrupted", listed
    shown = run_json("status", session, cwd=root)
    assert shown["status"] == "interrupted" and shown["nodes"] == [] and shown["checkpoints"] == []
    assert shown["error"].endswith(f"; {advice}"), shown["error"]
    text = orchestra("status", session, cwd=root).stdout
    assert "status   interrupted" in text and advice in text
    assert " interrupted " in orchestra("status", cwd=root).stdout

    # attach: prints what was recorded, then the same advice; exit 1
    attached = orchestra("attach", session, cwd=root, timeout=60)
    assert attached.returncode == 1 and "pipeline killed started" in attached.stdout
    assert attached.stderr.strip().splitlines()[-1].endswith(f"; {advice}"), attached.stderr
    followed = orchestra("attach", session, "--json", cwd=root, timeout=60)
    assert json.loads(followed.stdout.splitlines()[-1])["error"].endswith(f"; {advice}")

    # cleanup --dry-run: keeps the recorded branch as interrupted, with the same advice; removes nothing
    plan = run_json("cleanup", "--dry-run", cwd=root)
    assert plan["removed"] == []
    recorded = {record.repo: record for _, record in records_of(root, session, w.SessionBranchCreated)}
    if when == "branch-recorded":
        [kept] = [item for item in plan["kept"] if item["session_id"] == session]
        assert (kept["reason"], kept["detail"], kept["branches"]) == ("interrupted", advice, [recorded["project"].branch])
    else:
        assert recorded == {} and [item for item in plan["kept"] if item["session_id"] == session] == []

    # the web view's server: its session list, the session and the pipeline's status say the same; its graph draws
    with TestClient(create_app(PipelineService(cwd=root)), base_url=LOCAL) as client:
        assert [row["status"] for row in client.get("/sessions").json()["sessions"]] == ["interrupted"]
        assert client.get(f"/sessions/{session}").json()["error"] == shown["error"]
        assert client.get(f"/pipelines/{session}").json()["status"] == "interrupted"
        assert client.get(f"/pipelines/{session}/graph").status_code == 200  # from the pipeline its start recorded

    # replay: nothing to fork from, said with the same advice
    first_turn = shown["turns"][0]["turn_id"]
    replayed = orchestra("replay", session, "--checkpoint", first_turn, cwd=root)
    assert replayed.returncode == 2
    assert f"session {session} has no checkpoint to fork a replay from; {advice}" in replayed.stderr

    # resume: the same session from the start, on its recorded branch and base, with its --set values
    resumed = run_json("resume", session, cwd=root)
    assert (resumed["session_id"], resumed["status"]) == (session, "success"), resumed
    assert resumed["completed_nodes"] == ["start", "work", "done"] and resumed["context"]["who"] == "ada"
    project = resumed["repos"]["project"]
    assert project["base_sha"] == base
    if when == "branch-recorded":
        assert (project["branch"], project["base_sha"]) == (recorded["project"].branch, recorded["project"].base_sha)
    else:  # what the dead run made without recording it was removed, and the branch made again
        assert project["branch"] == f"orchestra/killed/{session}"
        [(_, cleaned)] = records_of(root, session, w.SessionCleanedUp)
        assert (cleaned.branch, cleaned.head_sha, cleaned.abandoned_ref) == (project["branch"], base, "")
    assert repo.git("branch", "--list", "orchestra/*").split() == ["+", project["branch"]]
    worktree = root / ".orchestra" / "worktrees" / session / "project"
    assert (worktree / "worked.txt").read_text() == "worked\n"
    assert run_json("status", session, cwd=root)["status"] == "success"
    events = [record.event for _, record in records_of(root, session, r.PipelineLifecycle)]
    interrupted = [r.LifecycleEvent.INTERRUPTED] if sig is signal.SIGINT else []
    assert events == [r.LifecycleEvent.STARTED, *interrupted, r.LifecycleEvent.RESUMED, r.LifecycleEvent.COMPLETED]
    assert orchestra("attach", session, cwd=root, timeout=60).returncode == 0


def test_a_recorded_branch_removed_by_hand_is_made_again_at_its_recorded_base(tmp_path: Path) -> None:
    root = tmp_path / "project"
    repo = make_repo(root, {"orchestra.yaml": CONFIG, "killed.dot": PIPELINE})
    base = repo.head()
    kill_while_held(root, held_environment(tmp_path, "branch-recorded"), tmp_path / "gate", signal.SIGKILL)
    session = str(run_json("status", cwd=root)["sessions"][0]["session_id"])
    [(_, recorded)] = records_of(root, session, w.SessionBranchCreated)
    repo.git("worktree", "remove", "--force", str(root / ".orchestra" / "worktrees" / session / "project"))
    repo.git("branch", "-D", recorded.branch)
    repo.write("later.txt", "main moved on\n")
    assert repo.commit_all("later") != base

    resumed = run_json("resume", session, cwd=root)
    assert resumed["status"] == "success", resumed
    assert resumed["repos"]["project"]["branch"] == recorded.branch
    assert resumed["repos"]["project"]["base_sha"] == recorded.base_sha == base  # not main's new head
    assert repo.git("merge-base", recorded.branch, "main").strip() == base
