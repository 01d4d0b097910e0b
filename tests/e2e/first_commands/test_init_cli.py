"""`orchestra init`: a commented orchestra.yaml and a starter pipeline that compiles and runs offline, in a new
git repository; existing files are never overwritten without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import orchestra
from tests.support.sandbox import needs_bwrap

FILES = ("orchestra.yaml", "pipeline.dot", "cassette.yaml")


@pytest.mark.slow
def test_init_writes_a_project_that_compiles_and_runs_offline_in_a_new_repository(tmp_path: Path) -> None:
    made = orchestra("init", "hello", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "hello"
    assert all((root / name).is_file() for name in FILES)
    assert "initialized a repository (branch main) and committed these files" in made.stdout
    assert "next    cd hello && orchestra compile pipeline.dot && orchestra run pipeline.dot" in made.stdout
    assert git(root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert sorted(GitRepo(root).files_in("main")) == sorted(FILES)

    compiled = orchestra("compile", "pipeline.dot", cwd=root)
    assert compiled.returncode == 0, compiled.stderr + compiled.stdout
    assert "valid" in compiled.stdout and "warning" not in compiled.stdout
    ran = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    document = json.loads(ran.stdout)
    assert document["status"] == "success"
    assert "hello.py" in GitRepo(root).files_in(document["repos"]["project"]["branch"])


def test_the_orchestra_yaml_is_commented_and_offers_the_sandbox(tmp_path: Path) -> None:
    made = orchestra("init", cwd=tmp_path)
    assert made.returncode == 0
    text = (tmp_path / "orchestra.yaml").read_text(encoding="utf-8")
    assert text.count("\n#") >= 5 and "docs/configuration.md" in text
    assert "# sandbox:\n#   kind: bubblewrap" in text
    [offer] = [line for line in made.stdout.splitlines() if line.startswith("sandbox ")]
    assert "bubblewrap" in offer and "`sandbox:`" in offer


@pytest.mark.slow
@needs_bwrap()
def test_the_offered_sandbox_works_once_uncommented(tmp_path: Path) -> None:
    made = orchestra("init", "--json", cwd=tmp_path)
    assert json.loads(made.stdout)["sandbox"].startswith("bubblewrap works here: uncomment the `sandbox:` lines")
    config = tmp_path / "orchestra.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("# sandbox:\n#   kind: bubblewrap", "sandbox:\n  kind: bubblewrap"), encoding="utf-8")
    git(tmp_path, "commit", "-q", "-am", "Sandbox on")
    doctor = json.loads(orchestra("doctor", "--json", cwd=tmp_path).stdout)
    [check] = [check for check in doctor["checks"] if check["name"] == "sandbox"]
    assert check["status"] == "ok" and check["detail"].startswith("bubblewrap")
    ran = orchestra("run", "pipeline.dot", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert json.loads(ran.stdout)["status"] == "success"


def test_init_in_an_existing_repository_leaves_its_history_alone(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README").write_text("mine\n")
    git(tmp_path, "add", "README")
    git(tmp_path, "commit", "-q", "-m", "Mine")
    made = orchestra("init", "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["files"] == list(FILES)
    assert GitRepo(tmp_path).log("main", "%s") == ["Mine"]
    nested = orchestra("init", "sub", cwd=tmp_path)  # inside the repository: no repository of its own
    assert nested.returncode == 0 and not (tmp_path / "sub" / ".git").exists()
    assert (
        "path: ..  # the git repository this directory is in"
        in (tmp_path / "sub" / "orchestra.yaml").read_text()
    )
    ran = orchestra("run", "pipeline.dot", "--quiet", cwd=tmp_path / "sub")
    assert ran.returncode == 0, ran.stderr + ran.stdout


def test_init_says_what_to_do_in_a_repository_without_a_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    made = orchestra("init", cwd=tmp_path)
    assert made.returncode == 0 and "commit something first" in made.stdout


def test_init_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    (tmp_path / "pipeline.dot").write_text("digraph mine {}\n")
    refused = orchestra("init", cwd=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "already exists; use --force" in refused.stderr
    assert (tmp_path / "pipeline.dot").read_text() == "digraph mine {}\n"
    assert not (tmp_path / "orchestra.yaml").exists()

    forced = orchestra("init", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "digraph starter" in (tmp_path / "pipeline.dot").read_text()


def test_init_refuses_a_file_as_its_directory(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    refused = orchestra("init", "taken", "--json", cwd=tmp_path)
    assert refused.returncode == 2
    assert "not a directory" in json.loads(refused.stdout)["error"]["message"]
