"""`orchestra checkout SESSION --turn TURN` on the README quick start: the code as a turn left it in detached
worktrees under .orchestra/checkouts/, the agent's reasoning, bad input (exit 2, one line), and what
`orchestra cleanup` does with those worktrees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.workspace.test_show_cli import Quickstart, quickstart
from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import checkout_fingerprint, orchestra

pytestmark = pytest.mark.slow


_TURNS: dict[Path, list[dict[str, Any]]] = {}


def agent_turns(project: Quickstart) -> list[dict[str, Any]]:
    """The session's agent turns as `orchestra status 1 --json` lists them, read once per project (checkouts
    and cleanups add none)."""
    if project.root not in _TURNS:
        status = orchestra("status", "1", "--json", cwd=project.root, env=project.env)
        _TURNS[project.root] = [t for t in json.loads(status.stdout)["turns"] if t["type"] == "dev.orchestra.AgentTurn"]
    return _TURNS[project.root]


def turn_id(project: Quickstart, node: str, number: int) -> str:
    return next(t["turn_id"] for t in agent_turns(project) if (t["node_id"], t["turn_number"]) == (node, number))


def checkout_json(project: Quickstart, *args: str) -> dict[str, Any]:
    result = orchestra("checkout", "1", *args, "--json", cwd=project.root, env=project.env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_each_turn_is_checked_out_as_it_left_the_code(tmp_path: Path) -> None:
    project = quickstart(tmp_path / "project")
    before = checkout_fingerprint(project.repo)
    branches = project.repo.branches()
    first = turn_id(project, "implement", 0)
    document = checkout_json(project, "--turn", first)
    path = Path(document["worktrees"]["project"])
    assert path == project.root / ".orchestra" / "checkouts" / "1" / f"turn-{first}" / "project"
    assert (path / "hello.py").exists() and not (path / "test_hello.py").exists()  # turn 0 wrote hello.py only
    written = next(t for t in agent_turns(project) if t["turn_id"] == first)
    assert document["commits"] == {"project": {"sha": written["git_sha"], "source": "turn"}}
    assert document["turn"]["node_id"] == "implement" and document["turn"]["turn_number"] == 0
    assert document["turn"]["tool_calls"][0]["args"]["path"] == "hello.py"
    assert git(path, "rev-parse", "HEAD").strip() == written["git_sha"]
    assert git(path, "status", "--porcelain", "-b").startswith("## HEAD (no branch)")

    # A read-only turn: the repo's latest commit before it (turn 1's test_hello.py), in a worktree of its own.
    done = turn_id(project, "implement", 2)
    later = checkout_json(project, "--turn", done)
    second = next(t for t in agent_turns(project) if (t["node_id"], t["turn_number"]) == ("implement", 1))
    assert later["commits"]["project"] == {"sha": second["git_sha"], "source": "earlier"}
    assert (Path(later["worktrees"]["project"]) / "test_hello.py").exists()

    # The text view prints the worktrees and the agent's reasoning; running it again reuses the worktree.
    text = orchestra("checkout", "1", "--turn", first, cwd=project.root, env=project.env)
    assert text.returncode == 0, text.stderr
    assert f"session 1, turn {first}: implement #0 (scripted, provider scripted)" in text.stdout
    assert f"project  {path}  {written['git_sha'][:12]}  the turn's commit" in text.stdout
    assert "assistant: I'll add hello.py first.  [calls project:write-file]" in text.stdout
    assert checkout_fingerprint(project.repo) == before and project.repo.branches() == branches


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Quickstart:
    from tests.support.environment import hermetic_env

    root = tmp_path_factory.mktemp("checkout")
    (root / "home").mkdir()
    return quickstart(root / "project", hermetic_env(root / "home"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["9", "--turn", "1"], "no session '9' in session store"),
        (["1", "--turn", "99999"], "turn '99999' is not an agent turn of session 1; see `orchestra status 1`"),
        (["1", "--turn", "x; rm -rf /"], "turn 'x; rm -rf /' is not an agent turn of session 1"),
        (["1", "--turn", "FIRST", "--repo", "nope"], "repo 'nope' is not a workspace repo of session 1 (its repos: project)"),
    ],
)
def test_bad_input_exits_2_with_one_line(project: Quickstart, args: list[str], message: str) -> None:
    args = [turn_id(project, "implement", 0) if arg == "FIRST" else arg for arg in args]
    result = orchestra("checkout", *args, cwd=project.root, env=project.env)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr
    as_json = orchestra("checkout", *args, "--json", cwd=project.root, env=project.env)
    assert as_json.returncode == 2 and message in json.loads(as_json.stdout)["error"]["message"]
    assert not (project.root / ".orchestra" / "checkouts").exists()


def test_a_turn_that_is_not_an_agent_turn_is_refused(project: Quickstart) -> None:
    status = json.loads(orchestra("status", "1", "--json", cwd=project.root, env=project.env).stdout)
    checkpoint = status["checkpoints"][0]["turn_id"]
    result = orchestra("checkout", "1", "--turn", checkpoint, cwd=project.root, env=project.env)
    assert result.returncode == 2
    assert f"turn '{checkpoint}' of session 1 is a dev.orchestra.Checkpoint turn, not an agent turn" in result.stderr


def test_without_a_store_there_is_no_session(tmp_path: Path) -> None:
    result = orchestra("checkout", "1", "--turn", "3", cwd=tmp_path)
    assert result.returncode == 2 and "no session '1': there is no session store" in result.stderr
    assert not (tmp_path / ".orchestra").exists()


def test_cleanup_removes_checkouts_nobody_worked_in(tmp_path: Path) -> None:
    project = quickstart(tmp_path / "project")
    paths = {
        number: Path(checkout_json(project, "--turn", turn_id(project, "implement", number))["worktrees"]["project"])
        for number in (0, 1, 2)
    }
    (paths[0] / "hello.py").write_text("edited\n")  # uncommitted work
    worked = GitRepo(paths[1])
    worked.write("notes.txt", "mine\n")
    mine = worked.commit_all("A commit on the detached HEAD")

    def cleanup(*args: str) -> dict[str, Any]:
        result = orchestra("cleanup", *args, "--json", cwd=project.root, env=project.env)
        assert result.returncode == 0, result.stderr
        return {Path(item["path"]): item for item in json.loads(result.stdout)["checkouts"]}

    planned = cleanup("--dry-run")
    assert {path: (item["action"], item["reason"]) for path, item in planned.items()} == {
        paths[0]: ("keep", "uncommitted"), paths[1]: ("keep", "committed"), paths[2]: ("remove", "checkout"),
    }
    assert all(path.exists() for path in paths.values())
    cleanup()
    assert paths[0].exists() and paths[1].exists() and not paths[2].exists()
    assert not paths[2].parent.exists()  # its turn-<id> directory went with it
    forced = cleanup("--force")
    assert {item["reason"] for item in forced.values()} == {"forced"}
    assert not paths[0].exists() and not paths[1].exists()
    kept = forced[paths[1]]["abandoned_ref"]
    assert project.repo.head(kept) == mine  # the commit made there stays reachable
    assert [w for w in git(project.root, "worktree", "list").splitlines() if "/.orchestra/checkouts/" in w] == []
    text = orchestra("cleanup", cwd=project.root, env=project.env)
    assert "checkout of turn" not in text.stdout


def test_a_session_without_workspace_repos_prints_the_turn_and_no_worktree(tmp_path: Path) -> None:
    from tests.support.chat_project import chat_project

    project = chat_project(tmp_path / "chat", ["/approve"])
    ran = orchestra("run", "chat.dot", "--answers", "answers.yaml", "--quiet", cwd=project)
    assert ran.returncode == 0, ran.stderr
    turns = json.loads(orchestra("status", "1", "--json", cwd=project).stdout)["turns"]
    turn = next(t["turn_id"] for t in turns if t["type"] == "dev.orchestra.AgentTurn")
    text = orchestra("checkout", "1", "--turn", turn, cwd=project)
    assert text.returncode == 0, text.stderr
    assert "no code to check out" in text.stdout and "assistant: Draft one" in text.stdout
    document = json.loads(orchestra("checkout", "1", "--turn", turn, "--json", cwd=project).stdout)
    assert document["worktrees"] == {} and document["turn"]["node_id"] == "synth"
