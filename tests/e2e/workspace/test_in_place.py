"""`isolation: in_place` through `orchestra run`: the checkout itself moves to the session branch; a dirty
checkout is refused before anything is created."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import SCRIPTED_PROVIDER, committed_files, orchestra

PIPELINE = """digraph inplace {
    start [shape=Mdiamond]; exit [shape=Msquare]
    implement [prompt="Write the greeting"]
    start -> implement -> exit
}
"""
CASSETTE = r"""
nodes:
  implement:
    - content: "Writing it."
      tool_calls:
        - {name: "project:write-file", args: {path: greeting.txt, content: "hello\n"}}
    - content: "Done."
commit_messages: ["Add the greeting\n\nOne line of text."]
"""
CONFIG = SCRIPTED_PROVIDER + "workspace:\n  repos:\n    project: {path: ., isolation: in_place}\n"
FILES = {"orchestra.yaml": CONFIG, "inplace.dot": PIPELINE, "cassette.yaml": CASSETTE}


def test_in_place_commits_on_the_session_branch_checked_out_in_the_repo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", FILES)
    base = repo.head()
    result = orchestra("run", "inplace.dot", "--quiet", cwd=repo.path)
    assert result.returncode == 0, result.stderr + result.stdout
    branch = "orchestra/inplace/1"
    assert repo.git("symbolic-ref", "--short", "HEAD").strip() == branch
    [sha] = repo.log(f"{base}..{branch}")
    assert committed_files(repo, sha) == ["greeting.txt"]
    assert (repo.path / "greeting.txt").read_text(encoding="utf-8") == "hello\n"
    assert repo.status() == "" and repo.head("main") == base
    assert not (repo.path / ".orchestra" / "worktrees").exists()


def test_in_place_refuses_a_dirty_checkout_and_creates_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project", FILES)
    repo.write("inplace.dot", PIPELINE + "// my unsaved edit\n")
    result = orchestra("run", "inplace.dot", cwd=repo.path)
    assert result.returncode == 2
    [message] = result.stderr.splitlines()
    assert "workspace.repos.project.isolation: in_place needs a clean working tree" in message
    assert "inplace.dot" in message
    assert repo.branches() == ["main"] and repo.status() == " M inplace.dot\n"
