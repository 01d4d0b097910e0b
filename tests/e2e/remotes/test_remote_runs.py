"""Remotes through `orchestra run` with local bare repositories as file URLs: clone at start, push on
completion, a remote that rejects pushes, an unreachable remote, a shallow clone with a parallel fan-in, and a
URL whose password never shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_core.model.workspace_events import PushFailed, RemotePushed, RepoCloned, RepoFetched
from tests.support.environment import hermetic_env
from tests.support.git_remote_repos import bare_remote, reject_pushes, remote_branches
from tests.support.git_repos import git
from tests.support.orchestra_project import SCRIPTED_PROVIDER, orchestra, records_of, write_files

pytestmark = pytest.mark.slow

BRANCH = "orchestra/rem/1"
PIPELINE = """digraph rem {
    start [shape=Mdiamond]; exit [shape=Msquare]
    first [prompt="Write one.py"]
    second [prompt="Write two.py"]
    start -> first -> second -> exit
}
"""
CASSETTE = r"""
nodes:
  first:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: one.py, content: "ONE = 1\n"}}]
    - content: "Done."
  second:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: two.py, content: "TWO = 2\n"}}]
    - content: "Done."
commit_messages: ["Add one\n\nOne.", "Add two\n\nTwo."]
"""
PARALLEL = """digraph rem {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Write left.py"]
    right [prompt="Write right.py"]
    join [shape=tripleoctagon]
    after [prompt="Write after.py"]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> after -> exit
}
"""
PARALLEL_CASSETTE = r"""
nodes:
  left:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: left.py, content: "L = 1\n"}}]
    - content: "Done."
  right:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: right.py, content: "R = 1\n"}}]
    - content: "Done."
  after:
    - content: "Writing."
      tool_calls: [{name: "app:write-file", args: {path: after.py, content: "A = 1\n"}}]
    - content: "Done."
commit_messages: ["Add left\n\nL.", "Add right\n\nR.", "Add after\n\nA."]
"""


def project(root: Path, remote: str, extra: str = "", *, pipeline: str = PIPELINE, cassette: str = CASSETTE) -> Path:
    """A project whose one repo `app` is to be cloned from `remote` into `project/app`."""
    path = root / "project"
    workspace = f"workspace:\n  repos:\n    app: {{path: app, remote: {json.dumps(remote)}{extra}}}\n"
    write_files(path, {"orchestra.yaml": SCRIPTED_PROVIDER + workspace, "rem.dot": pipeline, "cassette.yaml": cassette})
    return path


def environment(root: Path) -> dict[str, str]:
    (root / "home").mkdir(exist_ok=True)
    return hermetic_env(root / "home")


def test_a_missing_path_is_cloned_and_the_session_branch_pushed_on_completion(tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "app.git")
    proj = project(tmp_path, bare.as_uri())
    result = orchestra("run", "rem.dot", "--json", cwd=proj, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    head = json.loads(result.stdout)["repos"]["app"]["head_sha"]
    assert remote_branches(bare)[BRANCH] == head
    assert git(proj / "app", "rev-parse", "HEAD").strip() == remote_branches(bare)["main"]  # checkout untouched
    [(_, cloned)] = records_of(proj, "1", RepoCloned)
    assert (cloned.repo, cloned.url, cloned.depth) == ("app", bare.as_uri(), None)
    pushes = [event for _, event in records_of(proj, "1", RemotePushed)]
    assert [(p.branch, p.sha) for p in pushes] == [(BRANCH, head)]  # on_completion: one push, at the end
    status = json.loads(orchestra("status", "1", "--json", cwd=proj, env=environment(tmp_path)).stdout)
    assert status["repos"]["app"]["pushed_sha"] == head
    [pushed] = [t for t in status["turns"] if t["type"] == "dev.orchestra.RemotePushed"]
    assert (pushed["repo"], pushed["branch"], pushed["sha"]) == ("app", BRANCH, head)
    shown = orchestra("status", "1", cwd=proj, env=environment(tmp_path)).stdout
    assert "pushed" in shown and head[:12] in shown.split("repos", 1)[1]

    again = orchestra("run", "rem.dot", "--json", cwd=proj, env=environment(tmp_path))
    assert again.returncode == 0, again.stderr
    assert [event.repo for _, event in records_of(proj, "2", RepoFetched)] == ["app"]  # the path exists now


def test_a_remote_that_rejects_pushes_is_a_warning_and_the_run_succeeds(tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "app.git")
    reject_pushes(bare)
    proj = project(tmp_path, bare.as_uri(), ", push: on_checkpoint")
    result = orchestra("run", "rem.dot", cwd=proj, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    failures = [event for _, event in records_of(proj, "1", PushFailed)]
    assert failures and {f.category for f in failures} == {"rejected"}
    assert "pushes are closed" in failures[-1].reason
    assert "warning: push of orchestra/rem/1 in app failed (rejected)" in result.stdout
    assert BRANCH not in remote_branches(bare)
    assert not records_of(proj, "1", RemotePushed)


def test_an_unreachable_remote_stops_the_run_before_a_session_exists(tmp_path: Path) -> None:
    proj = project(tmp_path, (tmp_path / "nowhere.git").as_uri())
    result = orchestra("run", "rem.dot", cwd=proj, env=environment(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "workspace.repos.app.remote" in result.stderr and "not_found" in result.stderr
    listed = orchestra("status", "--json", cwd=proj, env=environment(tmp_path))
    assert json.loads(listed.stdout or '{"sessions": []}')["sessions"] == []


def test_a_shallow_clone_runs_per_turn_commits_and_a_parallel_fan_in(tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "app.git")
    proj = project(tmp_path, bare.as_uri(), ", clone_depth: 1", pipeline=PARALLEL, cassette=PARALLEL_CASSETTE)
    result = orchestra("run", "rem.dot", "--json", cwd=proj, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    assert git(proj / "app", "rev-parse", "--is-shallow-repository").strip() == "true"
    head = json.loads(result.stdout)["repos"]["app"]["head_sha"]
    files = git(proj / "app", "ls-tree", "-r", "--name-only", head).split()
    assert {"left.py", "right.py", "after.py"} <= set(files)
    assert remote_branches(bare)[BRANCH] == head
    [(_, cloned)] = records_of(proj, "1", RepoCloned)
    assert cloned.depth == 1


def test_a_base_older_than_the_shallow_history_is_fetched_on_demand(tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "app.git")
    first = git(bare, "rev-list", "--max-parents=0", "main").strip()  # two commits before main's tip
    proj = project(tmp_path, bare.as_uri(), f", clone_depth: 1, base_ref: {first}")
    result = orchestra("run", "rem.dot", "--json", cwd=proj, env=environment(tmp_path))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["repos"]["app"]["base_sha"] == first
    assert git(proj / "app", "rev-parse", "--is-shallow-repository").strip() == "false"


def test_a_password_in_the_remote_url_never_shows(tmp_path: Path) -> None:
    bare = bare_remote(tmp_path / "app.git")
    secret = "hunter2-very-secret"
    url = f"https://bob:{secret}@git.example/app.git"
    env = environment(tmp_path)
    # git itself sends the URL to the bare repository; Orchestra only ever sees the URL with the password.
    env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"url.{bare.as_uri()}.insteadOf", GIT_CONFIG_VALUE_0=url)
    proj = project(tmp_path, url, ", push: on_checkpoint")
    result = orchestra("run", "rem.dot", "--json", cwd=proj, env=env)
    assert result.returncode == 0, result.stderr
    assert BRANCH in remote_branches(bare)
    shown = orchestra("status", "1", "--json", cwd=proj, env=env)
    for text in (result.stdout, result.stderr, shown.stdout, shown.stderr):
        assert secret not in text
    for file in (proj / ".orchestra").rglob("*"):
        if file.is_file() and "worktrees" not in file.parts:
            assert secret.encode() not in file.read_bytes(), file
    [(_, cloned)] = records_of(proj, "1", RepoCloned)
    assert cloned.url == "https://bob:***@git.example/app.git"

    reject_pushes(bare)  # a failed push's message names the URL too
    rerun = orchestra("run", "rem.dot", cwd=proj, env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert secret not in rerun.stderr + rerun.stdout
    failures = [event for _, event in records_of(proj, "2", PushFailed)]
    assert failures and all(secret not in f.reason for f in failures)
    store = proj / ".orchestra" / "orchestra.db"
    assert secret.encode() not in store.read_bytes()
