"""`orchestra doctor` in real processes: a healthy project, a broken config, an unreachable CXDB, a missing API
key, a store without its type bundle, an unusable repo and no git at all."""

from __future__ import annotations

import importlib.metadata
import json
import os
import socket
import time
from pathlib import Path

from orchestra_adapters.storage.sqlite_schema import LATEST_VERSION
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.session.bundle import bundle_id
from tests.support.git_repos import git
from tests.support.orchestra_project import copy_example, orchestra, write_files

EXPECTED_CHECKS = [
    "orchestra", "python", "git", "graphviz", "config", "store", "type bundle", "provider scripted", "repo project",
    "sandbox", "mcp", "langgraph", "langchain-core",
]


def doctor(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, dict[str, str]]]:
    result = orchestra("doctor", "--json", *args, cwd=cwd, env=env)
    assert result.returncode in (0, 1), result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] == (result.returncode == 0)
    return result.returncode, {check["name"]: check for check in document["checks"]}


def quickstart(tmp_path: Path) -> Path:
    root = copy_example("quickstart", tmp_path / "project")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Start")
    return root


def test_a_healthy_project_passes_and_nothing_is_created(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    code, checks = doctor(root)
    assert code == 0, checks
    assert list(checks) == EXPECTED_CHECKS
    assert all(check["status"] == "ok" for check in checks.values()), checks
    assert checks["config"]["detail"] == str(root / "orchestra.yaml")
    assert checks["store"]["detail"].endswith("does not exist yet; the first run creates it")
    assert checks["git"]["detail"].startswith("git version ")
    assert checks["provider scripted"]["detail"] == "scripted, default, cassette cassette.yaml"
    assert checks["repo project"]["detail"].startswith(f"{root}, base HEAD = ")
    mcp_version = importlib.metadata.version("mcp")
    assert checks["mcp"]["detail"] == f"library {mcp_version}; the tool server is ready (orchestra mcp serve)"
    assert not (root / ".orchestra").exists() and git(root, "branch", "--list").strip() == "* main"
    text = orchestra("doctor", cwd=root)
    assert text.stdout.splitlines()[0].split() == ["status", "check", "detail"]
    assert text.stdout.splitlines()[-1] == "orchestra doctor: all good"


def test_a_store_without_its_type_bundle_gets_it(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    SqliteSessionStore(root / ".orchestra" / "orchestra.db").close()
    code, checks = doctor(root)
    assert code == 0
    assert checks["store"]["detail"] == f"{root / '.orchestra' / 'orchestra.db'}: readable and writable"
    assert checks["type bundle"]["detail"] == f"{bundle_id()} was missing; published it now"
    assert checks["schema"]["detail"] == f"version {LATEST_VERSION}"
    assert doctor(root)[1]["type bundle"]["detail"] == f"{bundle_id()} published"


def test_a_broken_config_is_an_error_naming_the_file_and_key(tmp_path: Path) -> None:
    write_files(tmp_path, {"orchestra.yaml": "providers:\n  default: scripted\nstorge:\n  backend: sqlite\n"})
    code, checks = doctor(tmp_path)
    assert code == 1
    config = checks["config"]
    assert config["status"] == "error" and config["detail"].startswith(f"{tmp_path / 'orchestra.yaml'}:3: storge")
    assert {checks[name]["status"] for name in ("store", "providers", "repos", "sandbox")} == {"warning"}
    text = orchestra("doctor", cwd=tmp_path)
    assert text.returncode == 1 and text.stdout.splitlines()[-1] == "orchestra doctor: 1 error, 4 warnings"
    missing = orchestra("doctor", "--config", "nope.yaml", cwd=tmp_path)
    assert missing.returncode == 1 and "nope.yaml: config file not found" in missing.stdout


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_cxdb_fails_fast_with_its_address(tmp_path: Path) -> None:
    binary, http = _unused_port(), _unused_port()
    write_files(
        tmp_path,
        {"orchestra.yaml": f"storage:\n  backend: cxdb\n  addr: 127.0.0.1:{binary}\n  url: http://127.0.0.1:{http}\n"},
    )
    started = time.monotonic()
    code, checks = doctor(tmp_path)
    assert time.monotonic() - started < 20
    assert code == 1 and checks["store"]["status"] == "error"
    assert f"127.0.0.1:{http}" in checks["store"]["detail"]
    assert "type bundle" not in checks


def test_a_missing_api_key_names_its_variable(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {"orchestra.yaml": "providers:\n  default: anthropic\n  anthropic:\n    models: {worker: claude-x}\n"
         "  spare:\n    cassette: missing.yaml\n"},
    )
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    code, checks = doctor(tmp_path, env=env)
    assert code == 1
    anthropic = checks["provider anthropic"]
    assert anthropic["status"] == "error" and "set the environment variable ANTHROPIC_API_KEY" in anthropic["detail"]
    spare = checks["provider spare"]  # configured, but nothing selects it: a warning
    assert spare["status"] == "warning" and "missing.yaml" in spare["detail"]
    _, checks = doctor(tmp_path, env={**env, "ANTHROPIC_API_KEY": "k"})
    assert "ANTHROPIC_API_KEY" not in checks["provider anthropic"]["detail"]


def test_an_unusable_repo_is_an_error_under_its_key(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    write_files(
        tmp_path,
        {"orchestra.yaml": "workspace:\n  repos:\n    api:\n      path: plain\n    web:\n      path: missing\n"},
    )
    code, checks = doctor(tmp_path)
    assert code == 1
    assert checks["repo api"] == {
        "name": "repo api", "status": "error",
        "detail": f"workspace.repos.api.path: {tmp_path / 'plain'} is not a git repository",
    }
    assert checks["repo web"]["detail"].startswith("workspace.repos.web.path: ")


def test_without_git_the_git_dependent_checks_fail(tmp_path: Path) -> None:
    root = quickstart(tmp_path)
    code, checks = doctor(root, env={**os.environ, "PATH": str(tmp_path / "empty")})
    assert code == 1
    assert checks["git"] == {
        "name": "git", "status": "error", "detail": "git not found on PATH (needed for workspaces and `orchestra show`)",
    }
    assert checks["repo project"]["detail"] == "not checked: git not found"
