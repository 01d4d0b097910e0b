"""Variants of the confinement attacks through `orchestra run`: Orchestra's state where it lies inside the
repo (a project in a subdirectory of its repository, a `--logs-root` there, `.ORCHESTRA`), every name git's
fsck reads as `.gitmodules` or `.gitattributes`, and files a command wrote that are committed apart; the
session branch passes `git fsck --strict`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.workspace.attack_projects import attack_project, commit_all, run_attack, write
from tests.support.git_repos import git
from tests.support.orchestra_project import orchestra, write_files

pytestmark = pytest.mark.slow

HOSTILE_MODULE = '[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch {marker}\n'


@pytest.mark.parametrize("isolation", ["in_place", "worktree"])
def test_the_state_of_a_project_inside_its_repository_is_out_of_reach(tmp_path: Path, isolation: str) -> None:
    repo = tmp_path / "repo"
    calls = [
        write("app/.orchestra/orchestra.db", "corrupted"),
        write("st/orchestra.db", "corrupted"),  # a committed symlink app/.orchestra
        write("app/.orchestra/runs/1/checkpoint.json", "{}"),
        write(".ORCHESTRA/x"),
        write("app/logs/checkpoint.json", "{}"),  # the run directory, given inside the checkout
        write("app/ok.txt", "ok\n"),
    ]
    root = attack_project(repo / "app", {"../README.md": "hi\n", ".gitignore": ".orchestra/\nlogs/\n"}, calls,
                          isolation=isolation, repo_path="..")  # fmt: skip
    (repo / "st").symlink_to("app/.orchestra")
    commit_all(repo)
    run = run_attack(root, "--logs-root", "logs")
    errors = [answer.error for answer in run.answers]
    refused = 5 if isolation == "in_place" else 4  # a worktree's app/logs is a copy, not the run directory
    assert all("Orchestra's own state" in str(error) for error in errors[:refused]), errors
    assert errors[refused:] == [None] * (6 - refused)
    assert not (root / "logs" / "checkpoint.json").read_text().startswith("{}")
    status = orchestra("status", run.document["session_id"], "--json", cwd=root)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "success"
    assert not (repo / ".ORCHESTRA").exists() and not list(repo.glob("**/.ORCHESTRA"))


def test_a_store_that_storage_path_puts_inside_the_repo_is_out_of_reach(tmp_path: Path) -> None:
    calls = [write("data/sessions.db", "corrupted"), write("data/sessions.db-wal", "x"), write("data/ok.txt", "ok")]
    root = attack_project(tmp_path / "project", {".gitignore": "data/*.db*\n"}, calls,
                          extra={"storage": {"path": "data/sessions.db"}})  # fmt: skip
    commit_all(root)
    run = run_attack(root, store=root / "data" / "sessions.db")
    assert ["Orchestra's own state" in str(answer.error) for answer in run.answers] == [True, True, False]
    status = orchestra("status", run.document["session_id"], "--json", cwd=root)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "success"


def test_every_spelling_of_gitmodules_and_gitattributes_is_checked(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    module = HOSTILE_MODULE.format(marker=marker)
    calls = [
        write(".gitmodules/x"),  # a directory where git reads a file: gitmodulesBlob
        write("gitmod~2", module),
        write("g~123456", module),
        write("GI7EBA~1", module),
        write(".gitmodules", "[submodule.evil]\n\tpath = evil\n\turl = --upload-pack=x\n"),
        write(".gitmodules", '[submodule "y"]\n\tpath = y\n\turl = https://example.com/a%0ab\n'),
        write("gitatt~1", "*.txt text " + "a" * 3000 + "\n"),
        write(".gitattributes/x"),
        write(" spaced name .txt", "kept as written\n"),
        write(".gitmodules", '[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n'),
    ]
    root = attack_project(tmp_path / "project", {"a.txt": "a\n"}, calls)
    commit_all(root)
    run = run_attack(root)
    assert [answer.error is None for answer in run.answers] == [False] * 8 + [True] * 2, run.answers
    git(root, "fsck", "--strict", "--no-dangling", run.branch)
    committed = git(root, "ls-tree", "-r", "-z", "--name-only", run.branch).split("\0")
    assert " spaced name .txt" in committed and ".gitmodules" in committed
    assert not marker.exists()


PARALLEL = """digraph par {
    start [shape=Mdiamond]; exit [shape=Msquare]
    fan [shape=component]
    left [shape=parallelogram, tool_command="printf '%s' \\"$MODULE\\" > gitmod~2 && echo made > made.txt"]
    right [shape=parallelogram, tool_command="echo right > right.txt"]
    join [shape=tripleoctagon]
    start -> fan
    fan -> left -> join
    fan -> right -> join
    join -> exit
}
"""


def test_a_command_s_hostile_gitmodules_is_not_committed_at_the_join(tmp_path: Path) -> None:
    root = tmp_path / "project"
    config = "workspace:\n  repos:\n    project: {path: ., isolation: worktree}\n"
    write_files(root, {"orchestra.yaml": config, "par.dot": PARALLEL, "README.md": "hi\n"})
    commit_all(root)
    module = HOSTILE_MODULE.format(marker=tmp_path / "PWNED")
    ran = orchestra("run", "par.dot", cwd=root, env={**os.environ, "MODULE": module})
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert "warning: WritesNotCommitted in project: content git's fsck refuses" in ran.stdout + ran.stderr
    branch = "orchestra/par/1"
    git(root, "fsck", "--strict", "--no-dangling", branch)
    committed = git(root, "ls-tree", "-r", "-z", "--name-only", branch).split("\0")
    assert "made.txt" in committed and "right.txt" in committed and "gitmod~2" not in committed


def test_links_the_agent_s_own_code_made_during_the_run_lead_nowhere(tmp_path: Path) -> None:
    # a project tool runs a script the agent wrote (as a test suite would): it plants symlink chains, directory
    # links and a hard link to .git/config; the agent's next writes and reads through them are refused
    setup = "ln -s .git gl; mkdir d; ln -s ../gl d/x; ln -s d/x chain; ln -s ../.. up; ln .git/config hard\n"
    calls = [
        write("setup.sh", setup),
        {"name": "project:setup", "args": {}},
        write("gl/config", "[core]\n\tfsmonitor = touch PWNED\n"),
        write("d/x/hooks/post-commit", "x"),
        write("chain/config", "x"),
        write("up/escape.txt", "x"),
        write("hard", "[core]\n\tfsmonitor = touch PWNED\n"),
        {"name": "project:read-file", "args": {"path": "chain/config"}},
    ]
    root = attack_project(tmp_path / "project", {"a.txt": "a\n"}, calls, tools={"setup": {"command": "sh setup.sh"}})
    commit_all(root)
    run = run_attack(root)
    errors = [answer.error for answer in run.answers]
    assert errors[:2] == [None, None] and all(errors[2:]), errors
    assert "hard links" in str(errors[6]) and "leaves the project repo" in str(errors[5])
    assert "fsmonitor" not in (root / ".git" / "config").read_text(encoding="utf-8")  # Orchestra's own link is there
    assert not (root / ".git" / "hooks" / "post-commit").exists() and not (tmp_path / "escape.txt").exists()
