"""`orchestra doctor`'s workspace repo checks: each repo as a run would find it, without creating anything.

A repo with a `remote` that is not cloned yet (its path missing or empty: the first state of every fleet worker and
CI job) is judged by what the remote advertises: session start will clone it, so the remote must answer and have
the `base_ref`. A repo with a `remote` that is cloned is fetched at session start, so its remote must answer too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestra_cli.doctor_check import ERROR, OK, WARNING, Check

REMOTE_TIMEOUT_S = 20.0  # per remote; a remote that hangs (a firewall dropping packets) is an error after it
_DOCTOR_SESSION = "1"


def repo_checks(container: Any, git_found: bool) -> list[Check]:
    """One check per `workspace.repos` entry, in configuration order."""
    from orchestra_core.model.layout import ProjectLayout
    from orchestra_core.workspace.remote_probe import needs_clone
    from orchestra_core.workspace.setup import RepoChecker, configured_path

    settings = container.settings()
    repos = settings.workspace.repos
    if not repos:
        return [Check("repos", OK, "no workspace repos configured: agents work in the project directory")]
    if not git_found:
        return [Check(f"repo {name}", ERROR, "not checked: git not found") for name in repos]
    state_dir = ProjectLayout(Path(container.project_root())).state_dir
    checker = RepoChecker(container.git(), settings.base_dir, state_dir)
    paths = {name: configured_path(repo, settings.base_dir) for name, repo in repos.items()}
    pending = {name for name, repo in repos.items() if repo.remote and needs_clone(paths[name])}
    cloned = {name: repo for name, repo in repos.items() if name not in pending}
    problems, plans = _local_checks(checker, cloned, state_dir)
    remotes = _remotes()
    checks = []
    for name, repo in repos.items():
        if name in pending:
            checks.append(_clone_check(checker, name, repo, paths[name], settings.base_dir, remotes))
        elif name in problems:
            checks.append(Check(f"repo {name}", ERROR, "; ".join(problems[name])))
        else:
            checks.append(_cloned_check(name, repo, plans[name], remotes))
    return checks


def _remotes() -> Any:
    """The adapter session start clones and fetches with (the same hardened environment and credentials),
    with a timeout fit for a check."""
    from orchestra_adapters.git.remotes import SubprocessGitRemotes

    return SubprocessGitRemotes(timeout_s=REMOTE_TIMEOUT_S)


def _local_checks(
    checker: Any, repos: Mapping[str, Any], state_dir: Path
) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The cloned repos checked as session setup checks them: each one's problems, and the plans of the others."""
    from orchestra_core.workspace.errors import WorkspaceConfigError

    def plans(selected: Mapping[str, Any]) -> dict[str, Any]:
        return {plan.name: plan for plan in checker.plans(selected, state_dir / "doctor", "doctor", _DOCTOR_SESSION)}

    problems: dict[str, list[str]] = {}
    try:
        return problems, plans(repos)
    except WorkspaceConfigError as error:
        for key, detail in error.problems:
            problems.setdefault(_repo_of(key, repos), []).append(f"{key}: {detail}")
    return problems, plans({name: repo for name, repo in repos.items() if name not in problems})


def _repo_of(key: str, repos: Mapping[str, Any]) -> str:
    return next((n for n in repos if key == f"workspace.repos.{n}" or key.startswith(f"workspace.repos.{n}.")), "")


def _cloned_check(name: str, repo: Any, plan: Any, remotes: Any) -> Check:
    """A repo that is there; with a `remote`, session start fetches from it, so it must answer."""
    from orchestra_core.model.remote_urls import redact_url
    from orchestra_core.ports.git_remotes import RemoteError

    detail = f"{plan.repo_root}, base {repo.base_ref} = {plan.base_sha[:12]}, {repo.isolation}"
    if not repo.remote:
        return Check(f"repo {name}", OK, detail)
    url = redact_url(repo.remote)
    try:
        remotes.remote_refs(repo.remote)
    except (RemoteError, ValueError) as error:
        problem = f"session start fetches from {url}, which cannot be reached: {error}"
        return Check(f"repo {name}", ERROR, f"workspace.repos.{name}.remote: {problem}")
    return Check(f"repo {name}", OK, f"{detail}; fetched from {url} at session start (it answers)")


def _clone_check(checker: Any, name: str, repo: Any, path: Path, config_dir: Path, remotes: Any) -> Check:
    """A repo session start will clone: the entry's settings, the session branch name, then the remote."""
    from orchestra_core.workspace.errors import WorkspaceConfigError
    from orchestra_core.workspace.remote_probe import UNCHECKED, plan_clone
    from orchestra_core.workspace.setup import check_repo_entry

    try:
        key = check_repo_entry(name, repo)
        checker.session_branch(key, repo, config_dir, "doctor", _DOCTOR_SESSION)
        clone = plan_clone(name, repo, path, remotes)
    except WorkspaceConfigError as error:
        return Check(f"repo {name}", ERROR, "; ".join(f"{key}: {detail}" for key, detail in error.problems))
    depth = f", depth {clone.depth}" if clone.depth else ""
    head = f" (HEAD {clone.default_branch})" if clone.default_branch else ""
    cloned = f"not cloned yet: {path} will be cloned from {clone.url} at session start{depth}; it answers{head}"
    if clone.base_sha == UNCHECKED:
        return Check(
            f"repo {name}", WARNING,
            f"{cloned}, but base_ref {repo.base_ref!r} can only be checked once cloned (the remote advertises its "
            f"branches and tags, not every commit), {repo.isolation}",
        )  # fmt: skip
    return Check(f"repo {name}", OK, f"{cloned}, base {repo.base_ref} = {clone.base_sha[:12]}, {repo.isolation}")
