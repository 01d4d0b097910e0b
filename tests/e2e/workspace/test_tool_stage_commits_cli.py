"""Nothing a run made before a crash is lost on resume (issue 31, item 6).

Eight tool stages each write a file in the session worktree; the fourth one (on the first run only) writes
its file, then sleeps until `orchestra run` is killed with SIGKILL or SIGTERM. `orchestra resume` must end
with every stage's file on the session branch, each committed as a turn of the stage that wrote it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from orchestra_core.model.turn import AgentTurn
from orchestra_core.model.workspace_events import UncommittedWorkSaved
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, make_repo
from tests.support.orchestra_project import (
    ORCHESTRA,
    SCRIPTED_PROVIDER,
    agent_turns,
    all_agent_turns,
    committed_files,
    orchestra,
    records_of,
    trailers,
    write_files,
)
from tests.support.processes import kill_quietly, live_processes_with, wait_until

pytestmark = pytest.mark.slow

STAGES = 8
SLEEPER = 4
BRANCH = "orchestra/eight/1"
WORKSPACE = "workspace:\n  repos:\n    app: {path: ../app}\nsandbox: {kind: none}\n"


def pipeline(flags: Path) -> str:
    def stage(n: int) -> str:
        command = f"echo stage {n} > s{n}.txt"
        if n == SLEEPER:  # the first time only: its file written, it waits to be killed
            command += f"; if [ ! -e {flags}/slept ]; then touch {flags}/slept {flags}/asleep; sleep 600; fi"
        return f'    s{n} [shape=parallelogram, tool_command="{command}"]'

    nodes = "\n".join(stage(n) for n in range(1, STAGES + 1))
    chain = " -> ".join(f"s{n}" for n in range(1, STAGES + 1))
    return f"digraph eight {{\n    start [shape=Mdiamond]; exit [shape=Msquare]\n{nodes}\n    start -> {chain} -> exit\n}}\n"


def kill_while_asleep(project: Path, flags: Path, env: dict[str, str], sig: int) -> None:
    runner = subprocess.Popen(
        [str(ORCHESTRA), "run", "eight.dot", "--quiet"], cwd=project, env={**env, "NO_COLOR": "1"},
        start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    logs = str(project / ".orchestra" / "runs" / "1")
    try:
        assert wait_until(lambda: (flags / "asleep").exists() or runner.poll() is not None, 60)
        assert runner.poll() is None, runner.stderr.read().decode() if runner.stderr else ""
        os.kill(runner.pid, sig)
        assert runner.wait(20) == -sig
        assert wait_until(lambda: not live_processes_with("ORCHESTRA_LOGS_ROOT", logs), 10)
    finally:
        kill_quietly(live_processes_with("ORCHESTRA_LOGS_ROOT", logs))
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_run_resumes_with_every_tool_stages_files_committed(tmp_path: Path, sig: int) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    app: GitRepo = make_repo(tmp_path / "app", {"app.txt": "app\n"})
    base = app.head()
    flags = tmp_path / "flags"
    flags.mkdir()
    project = tmp_path / "project"
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE,
            "cassette.yaml": "nodes: {}\n",
            "eight.dot": pipeline(flags),
        },
    )
    kill_while_asleep(project, flags, env, sig)
    # The three stages that finished before the kill committed their files.
    assert sorted(app.files_in(BRANCH)) == ["app.txt", "s1.txt", "s2.txt", "s3.txt"]

    # The killed stage had written s4.txt, uncommitted: the resume saves it before it rebuilds the worktree.
    finished = orchestra("resume", "1", "--json", cwd=project, env=env)
    assert finished.returncode == 0, finished.stderr
    resumed = json.loads(finished.stdout)
    assert resumed["status"] == "success"
    ref = "refs/orchestra/abandoned/1/1"
    assert committed_files(app, ref) == ["s4.txt"] and app.show(ref, "s4.txt") == "stage 4\n"
    assert f"warning: app: uncommitted changes in {project / '.orchestra/worktrees/1/app'} saved before resume " \
        f"as {ref}: s4.txt; get them back with `git checkout {ref} -- FILE` or `git cherry-pick {ref}`" in finished.stderr
    [(_, saved)] = records_of(project, "1", UncommittedWorkSaved)
    assert (saved.repo, saved.abandoned_ref, saved.paths, saved.reason) == ("app", ref, ("s4.txt",), "resume")
    assert sorted(app.files_in(BRANCH)) == sorted(["app.txt", *(f"s{n}.txt" for n in range(1, STAGES + 1))])
    for n in range(1, STAGES + 1):
        assert app.show(BRANCH, f"s{n}.txt") == f"stage {n}\n"
    # One commit per stage, each the turn of its stage, in order: the killed stage's file (written before the
    # kill, then again by the resumed run) is committed once, by the run that finished the stage.
    commits = list(reversed(app.log(f"{base}..{BRANCH}")))
    assert [committed_files(app, sha) for sha in commits] == [[f"s{n}.txt"] for n in range(1, STAGES + 1)]
    for n, sha in enumerate(commits, start=1):
        found = trailers(app, sha)
        assert found["Orchestra-Node"] == f"s{n}" and found["Orchestra-Session"] == "1", found
        assert found["Orchestra-Turn"] == "0" and found["Orchestra-Exit-Code"] == "0", found
        assert found["Orchestra-Command"].startswith(f"echo stage {n} > s{n}.txt"), found
    recorded: dict[str, AgentTurn] = {turn.node_id: turn for _, turn in agent_turns(project, "1")}
    assert {node: turn.git_sha for node, turn in recorded.items()} == {
        f"s{n}": sha for n, sha in enumerate(commits, start=1)
    }
    assert recorded["s2"].files_written == ("app:s2.txt",)
    status = json.loads(orchestra("status", "1", "--json", cwd=project, env=env).stdout)
    assert {t["node_id"]: t["git_sha"] for t in status["turns"] if t["type"] == "dev.orchestra.AgentTurn"} == {
        f"s{n}": sha for n, sha in enumerate(commits, start=1)
    }


PARALLEL = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan  [shape=component]
    a    [shape=parallelogram, tool_command="echo a > a.txt"]
    b    [shape=parallelogram, tool_command="echo b > b.txt"]
    join [shape=tripleoctagon]
    slow [shape=parallelogram, tool_command="echo partial > part.txt; sleep 30", timeout="1s"]
    start -> fan; fan -> a -> join; fan -> b -> join
    join -> slow
    slow -> exit [condition="outcome=fail"]
}
"""


def test_tool_stages_in_parallel_branches_commit_on_their_branch_and_a_timed_out_one_commits_what_it_made(
    tmp_path: Path,
) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    app = make_repo(tmp_path / "app", {"app.txt": "app\n"})
    base = app.head()
    project = tmp_path / "project"
    write_files(
        project,
        {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "cassette.yaml": "nodes: {}\n", "par.dot": PARALLEL},
    )
    done = orchestra("run", "par.dot", "--json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    branch = "orchestra/par/1"
    assert sorted(app.files_in(branch)) == ["a.txt", "app.txt", "b.txt", "part.txt"]
    by_node = {trailers(app, sha)["Orchestra-Node"]: sha for sha in app.log(f"{base}..{branch}", "%H")}
    for node in ("a", "b"):  # each on its own branch, merged at the join
        assert committed_files(app, by_node[node]) == [f"{node}.txt"]
        assert app.git("branch", "--contains", by_node[node], "--format=%(refname:short)").split() == [branch]
    slow = trailers(app, app.head(branch))
    assert (slow["Orchestra-Node"], slow["Orchestra-Exit-Code"]) == ("slow", "timed-out")
    assert committed_files(app, app.head(branch)) == ["part.txt"]
    turns = {turn.node_id: turn for turn in all_agent_turns(project, "1")}
    assert {node: turns[node].git_sha for node in ("a", "b", "slow")} == {
        "a": by_node["a"], "b": by_node["b"], "slow": app.head(branch),
    }
    assert turns["a"].commits[0].branch == "orchestra/par/1--fan-a"


TWO = """digraph two {
    start [shape=Mdiamond]; exit [shape=Msquare]
    one [shape=parallelogram, tool_command="echo one > one.txt"]
    two [shape=parallelogram, tool_command="cat one.txt > two.txt"]
    start -> one -> two -> exit
}
"""


def test_a_tool_stages_turn_can_be_checked_out_and_replayed_from(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    env = hermetic_env(tmp_path / "home")
    app = make_repo(tmp_path / "app", {"app.txt": "app\n"})
    project = tmp_path / "project"
    write_files(project, {"orchestra.yaml": SCRIPTED_PROVIDER + WORKSPACE, "cassette.yaml": "nodes: {}\n", "two.dot": TWO})
    assert orchestra("run", "two.dot", "--quiet", cwd=project, env=env).returncode == 0
    [(stored, one)] = [(turn, record) for turn, record in agent_turns(project, "1") if record.node_id == "one"]
    checkout = json.loads(orchestra("checkout", "1", "--turn", stored.turn_id, "--json", cwd=project, env=env).stdout)
    where = Path(checkout["worktrees"]["app"])
    assert (where / "one.txt").read_text() == "one\n" and not (where / "two.txt").exists()
    replay = orchestra("replay", "1", "--turn", stored.turn_id, "--json", cwd=project, env=env)
    assert replay.returncode == 0, replay.stderr
    replayed = json.loads(replay.stdout)
    # The replay starts on the turn's commit and runs `one` again (no agent to continue: no resume keys linger).
    assert replayed["repos"]["app"]["base_sha"] == one.git_sha
    assert not any(key.startswith("internal.resume_") for key in replayed["context"])
    assert app.show(f"orchestra/two/{replayed['session_id']}", "two.txt") == "one\n"
