"""A node's diff over its turns: its commits joined into ranges of unbroken runs, another node's commits between two
runs (a loop) left out."""

from __future__ import annotations

from pathlib import Path

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.server.diff_text import parse_diff
from orchestra_adapters.server.diffs import commit_ranges
from tests.support.git_repos import make_repo


def test_unbroken_runs_are_one_range_and_other_nodes_commits_stay_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    base = repo.head()
    shas: dict[str, str] = {}
    for name, node in (("a1", "A"), ("a2", "A"), ("b1", "B"), ("a3", "A")):
        repo.write(f"{name}.txt", f"{node}\n")
        shas[name] = repo.commit_all(f"{node}: {name}")
    git = SubprocessGit()

    ranges = commit_ranges(git, repo.path, [shas["a1"], shas["a2"], shas["a3"]])

    assert ranges == [(base, shas["a2"], 2), (shas["b1"], shas["a3"], 1)]
    files = [f.path for base_, head, _ in ranges for f in parse_diff(git.diff(repo.path, base_, head), 100)]
    assert files == ["a1.txt", "a2.txt", "a3.txt"]  # b1.txt, the other node's, is in none of them
