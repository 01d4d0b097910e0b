"""`orchestra doctor` where a workspace repo has a `remote` (a local bare repository here) and is not cloned yet:
the first state of every fleet worker and CI job. The repo check says session start will clone it, checks that
the remote answers and has the `base_ref`, and creates nothing; an unreachable remote is an error naming the repo
and its URL without the password. A cloned repo with a remote is fetched at session start: its remote must answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.git_remote_repos import bare_remote
from tests.support.git_repos import git
from tests.support.orchestra_project import orchestra, write_files

SECRET = "s3cr3t-token"


def doctor(cwd: Path) -> tuple[int, dict[str, dict[str, str]]]:
    result = orchestra("doctor", "--json", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] == (result.returncode == 0)
    return result.returncode, {check["name"]: check for check in document["checks"]}


def project(tmp_path: Path, remote: str, **settings: str) -> Path:
    """A project whose repo `backend` (path `checkouts/backend`, not cloned) comes from `remote`."""
    root = tmp_path / "project"
    extra = "".join(f"      {key}: {value}\n" for key, value in settings.items())
    write_files(root, {"orchestra.yaml": (
        "workspace:\n  repos:\n    backend:\n      path: checkouts/backend\n"
        f"      remote: {json.dumps(remote)}\n{extra}"
    )})  # fmt: skip
    return root


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare repository with `main` (its HEAD), a branch `dev` one commit behind, and a tag `v1` on it."""
    bare = bare_remote(tmp_path / "remotes" / "backend.git")
    git(bare, "branch", "dev", "main~1")
    git(bare, "tag", "v1", "main~1")
    return bare


@pytest.mark.parametrize("form", ["path", "file-url"])
def test_a_repo_not_cloned_yet_will_be_cloned_from_its_reachable_remote(
    tmp_path: Path, remote: Path, form: str
) -> None:
    url = str(remote) if form == "path" else remote.as_uri()
    root = project(tmp_path, url, clone_depth="1")
    code, checks = doctor(root)
    check = checks["repo backend"]
    assert code == 0 and check["status"] == "ok", check
    path = root / "checkouts" / "backend"
    main = git(remote, "rev-parse", "main").strip()
    assert check["detail"] == (
        f"not cloned yet: {path} will be cloned from {url} at session start, depth 1; it answers (HEAD main), "
        f"base HEAD = {main[:12]}, worktree"
    )
    assert not path.exists() and not (root / "checkouts").exists()  # nothing was cloned or created
    text = orchestra("doctor", cwd=root)
    assert any(line.startswith("ok") and "repo backend" in line and "will be cloned" in line
               for line in text.stdout.splitlines()), text.stdout  # fmt: skip


def test_an_empty_directory_is_cloned_into_as_well(tmp_path: Path, remote: Path) -> None:
    root = project(tmp_path, str(remote))
    (root / "checkouts" / "backend").mkdir(parents=True)
    _, checks = doctor(root)
    assert checks["repo backend"]["status"] == "ok"
    assert checks["repo backend"]["detail"].startswith("not cloned yet: ")


def test_an_unreachable_remote_is_an_error_naming_the_repo_and_url_without_its_password(tmp_path: Path) -> None:
    missing = f"file://bob:{SECRET}@localhost{tmp_path}/remotes/missing.git"
    root = project(tmp_path, missing)
    code, checks = doctor(root)
    check = checks["repo backend"]
    assert code == 1 and check["status"] == "error", check
    redacted = f"file://bob:***@localhost{tmp_path}/remotes/missing.git"
    assert check["detail"].startswith(
        f"workspace.repos.backend.remote: {root / 'checkouts' / 'backend'} is not cloned yet and its remote "
        f"{redacted} cannot be reached: git ls-remote {redacted} failed (not_found): "
    ), check
    text = orchestra("doctor", cwd=root)
    assert SECRET not in text.stdout + text.stderr and SECRET not in json.dumps(checks)
    assert text.stdout.splitlines()[-1].startswith("orchestra doctor: 1 error")


@pytest.mark.parametrize(
    ("base_ref", "status", "detail"),
    [
        ("origin/dev", "ok", "base origin/dev = {dev}, worktree"),
        ("v1", "ok", "base v1 = {dev}, worktree"),
        ("main", "ok", "base main = {main}, worktree"),
        ("{dev_sha}", "ok", "base {dev_sha} = {dev}, worktree"),
        ("main~1", "warning", "but base_ref 'main~1' can only be checked once cloned"),
        ("dev", "error", "workspace.repos.backend.base_ref: 'dev' is a branch of the remote {url} but not its default "
         "branch, so a clone has it as origin/dev; set base_ref: origin/dev"),
        ("release", "error", "workspace.repos.backend.base_ref: 'release' will not name a commit in the clone of "
         "{url}, which has branches origin/dev, origin/main; tags v1"),
    ],
)
def test_the_base_ref_is_looked_for_as_the_clone_will_have_it(
    tmp_path: Path, remote: Path, base_ref: str, status: str, detail: str
) -> None:
    shas = {"dev": git(remote, "rev-parse", "dev").strip()[:12], "main": git(remote, "rev-parse", "main").strip()[:12],
            "dev_sha": git(remote, "rev-parse", "dev").strip(), "url": str(remote)}  # fmt: skip
    root = project(tmp_path, str(remote), base_ref=json.dumps(base_ref.format(**shas)))
    code, checks = doctor(root)
    check = checks["repo backend"]
    assert check["status"] == status, check
    assert detail.format(**shas) in check["detail"], check
    assert code == (1 if status == "error" else 0)


def test_a_cloned_repo_with_a_remote_is_checked_locally_and_its_remote_must_answer(
    tmp_path: Path, remote: Path
) -> None:
    root = project(tmp_path, str(remote))
    clone = root / "checkouts" / "backend"
    git(tmp_path, "clone", "--quiet", str(remote), str(clone))
    code, checks = doctor(root)
    head = git(clone, "rev-parse", "HEAD").strip()
    assert code == 0 and checks["repo backend"] == {
        "name": "repo backend", "status": "ok",
        "detail": f"{clone}, base HEAD = {head[:12]}, worktree; fetched from {remote} at session start (it answers)",
    }
    moved = remote.with_name("moved.git")
    remote.rename(moved)
    code, checks = doctor(root)
    assert code == 1 and checks["repo backend"]["status"] == "error"
    assert checks["repo backend"]["detail"].startswith(
        f"workspace.repos.backend.remote: session start fetches from {remote}, which cannot be reached: "
    )
