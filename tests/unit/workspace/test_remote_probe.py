"""A repo not cloned yet, judged by what its remote advertises: the refs a clone will have, what `base_ref` will
name there (as `git rev-parse` finds it), and `plan_clone`'s errors under the repo's keys without a password."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.git.remotes import parse_ls_remote
from orchestra_core.model.settings import RepoSettings
from orchestra_core.ports.git_remotes import RemoteRefs
from orchestra_core.testing.git_remotes import InMemoryGitRemotes
from orchestra_core.workspace.errors import WorkspaceConfigError
from orchestra_core.workspace.remote_probe import (
    UNCHECKED,
    base_after_clone,
    cloned_refs,
    needs_clone,
    plan_clone,
)

MAIN, DEV, TAG = "a" * 40, "b" * 40, "c" * 40
REMOTE = RemoteRefs(
    {"refs/heads/main": MAIN, "refs/heads/dev": DEV, "refs/tags/v1": TAG, "refs/heads/feature/x": DEV},
    head_branch="main",
    head_sha=MAIN,
)
URL = "https://bob:hunter2@git.example/app.git"


def test_a_clone_has_the_default_branch_the_remote_branches_under_origin_and_the_tags() -> None:
    assert cloned_refs(REMOTE) == {
        "HEAD": MAIN, "refs/heads/main": MAIN, "refs/remotes/origin/HEAD": MAIN, "refs/remotes/origin/main": MAIN,
        "refs/remotes/origin/dev": DEV, "refs/remotes/origin/feature/x": DEV, "refs/tags/v1": TAG,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("base_ref", "expected"),
    [
        ("HEAD", MAIN), ("main", MAIN), ("refs/heads/main", MAIN), ("origin/main", MAIN), ("origin", MAIN),
        ("origin/dev", DEV), ("remotes/origin/dev", DEV), ("refs/remotes/origin/feature/x", DEV),
        ("v1", TAG), ("tags/v1", TAG), ("refs/tags/v1", TAG), (DEV, DEV), (DEV[:10], DEV),
        ("dev", None), ("feature/x", None), ("release", None), ("nothing~1", None),
        ("main~2", UNCHECKED), ("v1^{commit}", UNCHECKED), ("main@{1}", UNCHECKED), ("1234abcd", UNCHECKED),
        ("aaaa", MAIN),
    ],
)
def test_base_ref_names_what_rev_parse_will_find_in_the_clone(base_ref: str, expected: str | None) -> None:
    assert base_after_clone(base_ref, REMOTE) == expected


def test_an_empty_remote_has_no_head() -> None:
    assert base_after_clone("HEAD", RemoteRefs()) is None
    assert cloned_refs(RemoteRefs()) == {}


def test_a_missing_or_empty_path_is_cloned_into(tmp_path: Path) -> None:
    assert needs_clone(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    assert needs_clone(tmp_path / "empty")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("x")
    assert not needs_clone(tmp_path / "full")


def test_plan_clone_reports_the_remote_and_the_base() -> None:
    remotes = InMemoryGitRemotes()
    remotes.add_remote(URL, {"main": MAIN, "dev": DEV}, tags={"v1": TAG})
    clone = plan_clone("app", RepoSettings(path="app", remote=URL, clone_depth=1), Path("/x/app"), remotes)
    assert (clone.url, clone.depth, clone.base_sha, clone.default_branch) == (
        "https://bob:***@git.example/app.git", 1, MAIN, "main"
    )


@pytest.mark.parametrize(
    ("base_ref", "fails", "key", "words"),
    [
        ("HEAD", "network", "remote", "/x/app is not cloned yet and its remote https://bob:***@git.example/app.git "
         "cannot be reached: git ls-remote https://bob:***@git.example/app.git failed (network)"),
        ("dev", None, "base_ref", "set base_ref: origin/dev"),
        ("gone", None, "base_ref", "which has branches origin/dev, origin/main; tags v1"),
    ],
)
def test_plan_clone_errors_are_under_the_repo_keys_without_the_password(
    base_ref: str, fails: str | None, key: str, words: str
) -> None:
    remotes = InMemoryGitRemotes()
    remotes.add_remote(URL, {"main": MAIN, "dev": DEV}, tags={"v1": TAG})
    if fails:
        remotes.fail(URL, "network")
    with pytest.raises(WorkspaceConfigError) as caught:
        plan_clone("app", RepoSettings(path="app", remote=URL, base_ref=base_ref), Path("/x/app"), remotes)
    [(problem_key, detail)] = caught.value.problems
    assert problem_key == f"workspace.repos.app.{key}" and words in detail and "hunter2" not in detail


SHA = st.from_regex(r"[0-9a-f]{40}", fullmatch=True)
REF_NAME = st.from_regex(r"refs/(heads|tags)/[A-Za-z0-9._-]{1,8}(/[A-Za-z0-9._-]{1,8})?", fullmatch=True)


@given(st.dictionaries(REF_NAME, SHA, max_size=8), st.data())
def test_ls_remote_output_parses_back_to_what_the_remote_advertised(refs: dict[str, str], data: st.DataObject) -> None:
    branches = sorted(name for name in refs if name.startswith("refs/heads/"))
    head = data.draw(st.sampled_from(branches)) if branches else None
    peeled = {name: data.draw(SHA) for name in refs if name.startswith("refs/tags/") and data.draw(st.booleans())}
    lines = [f"ref: {head}\tHEAD", f"{refs[head]}\tHEAD"] if head else []
    for name, sha in sorted(refs.items()):
        lines.append(f"{sha}\t{name}")
        if name in peeled:
            lines.append(f"{peeled[name]}\t{name}^{{}}")
    parsed = parse_ls_remote("\n".join(lines) + "\n")
    assert dict(parsed.refs) == {**refs, **peeled}
    assert parsed.head_branch == (head.removeprefix("refs/heads/") if head else None)
    assert parsed.head_sha == (refs[head] if head else None)
