"""A run killed while its parallel branches work resumes: the parallel node runs again in fresh branch
worktrees, the killed ones' commits stay reachable under refs/orchestra/abandoned/..., and the fan-in merges
(seed 001: "Resume restores worktree")."""

from __future__ import annotations

from pathlib import Path

from tests.support.environment import hermetic_env
from tests.support.git_repos import git, make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, orchestra, run_json, write_files

# The right branch waits until the left agent has committed in its worktree, then kills the runner (once).
KILL_ONCE = (
    "test -e {marker} && exit 0; touch {marker}; "
    "for i in $(seq 400); do test -n \\\"$(git -C ../../fan:left/project log -1 --format=%H -- left.txt)\\\" "
    "&& break; sleep 0.05; done; kill -9 $PPID"
)
PIPELINE = """digraph par {{
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [prompt="Write the left module"]
    right [shape=parallelogram, tool_command="{command}"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> exit
}}
"""
CASSETTE = r"""nodes:
  left:
    - content: "The left module."
      tool_calls:
        - {name: "project:write-file", args: {path: left.txt, content: "left\n"}}
    - content: "Done."
default: "Done."
"""


def test_a_fan_out_killed_midway_resumes_in_fresh_worktrees_and_merges(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    project = tmp_path / "project"
    command = KILL_ONCE.format(marker=tmp_path / "killed-once")
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + "workspace:\n  repos:\n    project: {path: ../repo}\n",
            "par.dot": PIPELINE.format(command=command),
            "cassette.yaml": CASSETTE,
        },
    )
    killed = orchestra("run", "par.dot", cwd=project, env=env)
    assert killed.returncode == -9, killed.stderr + killed.stdout
    left_worktree = project / ".orchestra" / "worktrees" / "1" / "fan:left" / "project"
    first_left = git(left_worktree, "log", "-1", "--format=%H", "--", "left.txt").strip()
    assert first_left

    document = run_json("resume", "1", cwd=project, env=env)
    assert document["status"] == "success", document
    branch = document["repos"]["project"]["branch"]
    assert git(repo.path, "show", f"{branch}:left.txt") == "left\n"
    keeping = git(repo.path, "for-each-ref", "--contains", first_left, "refs/orchestra/abandoned/1/").split()
    assert keeping, "the killed branch's commit is no longer reachable"
    assert not list((project / ".orchestra" / "worktrees" / "1").glob("fan:*"))
