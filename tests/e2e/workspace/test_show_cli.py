"""`orchestra show COMMIT` end to end: where it looks, what it says when it cannot trace a commit (exit 2,
one line naming what was tried), copies of agent commits, `--config`, and a CXDB store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from attrs import frozen

from tests.support.cxdb_server import FakeCxdbServer
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import copy_example, orchestra

BRANCH = "orchestra/quickstart/1"
TRAILERS = "Orchestra-Node: implement\nOrchestra-Session: {session}\nOrchestra-Turn: 0"


@frozen
class Quickstart:
    root: Path
    repo: GitRepo
    env: dict[str, str]


def quickstart(target: Path, env: dict[str, str] | None = None, *, extra_config: str = "") -> Quickstart:
    """The README quick start, run once (with `extra_config` appended to its orchestra.yaml)."""
    root = copy_example("quickstart", target)
    with (root / "orchestra.yaml").open("a", encoding="utf-8") as config:
        config.write(extra_config)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    ran = orchestra("run", "pipeline.dot", "--quiet", cwd=root, env=env)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    return Quickstart(root, GitRepo(root), env or {})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Quickstart:
    root = tmp_path_factory.mktemp("show")
    (root / "home").mkdir()
    return quickstart(root / "project", hermetic_env(root / "home"))


def show(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = orchestra("show", *args, cwd=cwd, env=env or None)
    return result.returncode, result.stdout, result.stderr


def commit_with_trailers(repo: GitRepo, session: str) -> str:
    repo.write("x.txt", session)
    repo.git("add", "x.txt")
    repo.git("commit", "-q", "-m", f"Looks like an agent's\n\n{TRAILERS.format(session=session)}")
    return repo.head()


def one_line_error(code: int, stderr: str) -> str:
    assert code == 2
    [line] = stderr.splitlines()
    assert line.startswith("orchestra: error: ")
    return line


def test_a_commit_without_trailers_is_refused(project: Quickstart) -> None:
    line = one_line_error(*show("main", cwd=project.root, env=project.env)[::2])
    assert "has no Orchestra trailers" in line and "(Start)" in line


def test_a_rev_that_names_no_commit_and_a_directory_outside_git_are_refused(
    project: Quickstart, tmp_path: Path
) -> None:
    line = one_line_error(*show("no-such-branch", cwd=project.root, env=project.env)[::2])
    assert "'no-such-branch' names no commit in" in line
    line = one_line_error(*show("HEAD", cwd=tmp_path)[::2])
    assert "is not inside a git repository" in line


def test_an_unknown_session_names_every_store_tried(project: Quickstart, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "other")
    repo.git("config", "--add", "orchestra.project", str(project.root))
    repo.git("config", "--add", "orchestra.project", str(tmp_path / "deleted-project"))
    sha = commit_with_trailers(repo, "42")
    line = one_line_error(*show(sha, cwd=repo.path)[::2])
    assert f"commit {sha[:12]} (Orchestra-Session 42) is not recorded" in line
    assert f"{project.root / '.orchestra' / 'orchestra.db'}: no session 42" in line
    assert f"{tmp_path / 'deleted-project'}: no longer exists" in line


def test_a_broken_project_config_is_one_reason_and_the_next_project_is_tried(
    project: Quickstart, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "orchestra.yaml").write_text("colour: blue\nflavour: sweet\n", encoding="utf-8")
    repo = make_repo(tmp_path / "other")
    repo.git("config", "--add", "orchestra.project", str(broken))
    repo.git("config", "--add", "orchestra.project", str(project.root))
    sha = commit_with_trailers(repo, "1")
    line = one_line_error(*show(sha, cwd=repo.path, env=project.env)[::2])
    assert f"{broken}: " in line and "colour" in line and "flavour" in line
    assert "session 1 has no agent turn with this commit" in line


def test_a_repo_linked_to_no_project_says_how_to_point_at_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "lonely")
    sha = commit_with_trailers(repo, "1")
    line = one_line_error(*show(sha, cwd=repo.path)[::2])
    assert "no project to look in" in line and "--config" in line


def test_a_cherry_picked_copy_is_traced_through_its_trailers_and_subject(project: Quickstart) -> None:
    repo = project.repo
    original = repo.head(f"{BRANCH}~1")
    repo.git("branch", "-f", "rebased", "main")
    worktree = project.root.parent / "rebased-worktree"
    repo.git("worktree", "add", "-q", str(worktree), "rebased")
    git(worktree, "cherry-pick", original)
    code, out, err = show("HEAD", "--json", cwd=worktree, env=project.env)
    assert code == 0, err
    document = json.loads(out)
    assert document["turn"]["matched"] == "trailers" and document["commit"]["sha"] != original
    assert document["turn"]["commits"][0]["sha"] == original
    text = show("HEAD", cwd=worktree, env=project.env)[1]
    assert f"this commit is a copy of the recorded one (recorded as {original[:12]})" in text


def test_a_clone_without_links_finds_the_store_with_config(project: Quickstart, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project.root), str(clone))
    rev = f"origin/{BRANCH}"
    line = one_line_error(*show(rev, cwd=clone, env=project.env)[::2])
    assert f"no session store at {clone / '.orchestra' / 'orchestra.db'}" in line
    code, out, err = show(
        rev, "--json", "--config", str(project.root / "orchestra.yaml"), cwd=clone, env=project.env
    )
    assert code == 0, err
    assert json.loads(out)["turn"]["turn_number"] == 1 and json.loads(out)["project"] == str(project.root)


def test_show_imports_no_llm_framework(project: Quickstart) -> None:
    probe = (
        "import sys\nfrom orchestra_cli.app import app\ntry:\n    app(['show', sys.argv[1], '--json'])\n"
        "except SystemExit as done:\n    assert done.code == 0, done.code\n"
        "print(' '.join(sorted({name.split('.')[0] for name in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, BRANCH],
        capture_output=True,
        text=True,
        cwd=project.root,
        env=project.env,
    )
    assert result.returncode == 0, result.stderr
    roots = set(result.stdout.splitlines()[-1].split())
    assert "orchestra_cli" in roots and not roots & {
        "langchain_core",
        "langgraph",
        "mcp",
        "httpx",
        "requests",
    }


def test_text_output_is_complete_when_piped(project: Quickstart) -> None:
    code, out, _ = show(f"{BRANCH}~1", cwd=project.root, env=project.env)
    assert code == 0
    assert "Goal: Add a hello world script with a test" in out  # the whole prompt, nothing shortened
    assert "--json shows all" not in out


@pytest.mark.slow
def test_a_cxdb_project_is_read_from_its_server(tmp_path: Path) -> None:
    with FakeCxdbServer() as server:
        storage = f"\nstorage:\n  backend: cxdb\n  addr: {server.addr}\n  url: {server.url}\n"
        project = quickstart(tmp_path / "project", extra_config=storage)
        assert not (project.root / ".orchestra" / "orchestra.db").exists()
        [agent] = json.loads(show(BRANCH, "--json", cwd=project.root)[1])["turn"]["tool_calls"]
        assert agent["args"]["path"] == "test_hello.py"


PARALLEL = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]; join [shape=tripleoctagon]
    left [prompt="Write the left file"]; right [prompt="Write the right file"]
    start -> fan; fan -> left; fan -> right; left -> join; right -> join; join -> exit
}
"""
PARALLEL_CASSETTE = r"""
nodes:
  left:
    - {content: "Left.", tool_calls: [{name: "project:write-file", args: {path: left.txt, content: "L\n"}}]}
  right:
    - {content: "Right.", tool_calls: [{name: "project:write-file", args: {path: right.txt, content: "R\n"}}]}
default: "Done."
"""


@pytest.mark.slow
def test_commits_of_parallel_branches_are_found_in_the_branch_sessions(tmp_path: Path) -> None:
    config = "providers: {default: scripted, scripted: {cassette: cassette.yaml}}\nbackend: langgraph\n"
    files = {
        "orchestra.yaml": config + "workspace: {repos: {project: {path: .}}}\n",
        "par.dot": PARALLEL,
        "cassette.yaml": PARALLEL_CASSETTE,
    }
    repo = make_repo(tmp_path / "project", files)
    ran = orchestra("run", "par.dot", "--quiet", cwd=repo.path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    commits = repo.git("log", "--no-merges", "--format=%H", "main..orchestra/par/1").split()
    assert len(commits) == 2  # the agents' commits; the merge commits at fan-in come besides
    sessions = set()
    for sha in commits:
        document = json.loads(show(sha, "--json", cwd=repo.path)[1])
        node = repo.git("log", "-1", "--format=%(trailers:key=Orchestra-Node,valueonly)", sha).strip()
        assert document["turn"]["node_id"] == node and document["turn"]["matched"] == "sha"
        assert document["session"]["session_id"] == "1"
        sessions.add(document["turn"]["session_id"])
    assert len(sessions) == 2 and "1" not in sessions  # each branch's turns live in its own forked session
