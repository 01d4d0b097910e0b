"""What `orchestra --help`, `compile` and `run --backend simulate` import, and compile, stays what they need (issue
33): counted in a real `orchestra` process, never timed. No LLM framework, web framework, fleet or telemetry
library is imported on their paths; help defines none of Orchestra's classes; a later run compiles none of the
methods attrs generates (they come from the bytecode cache)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestra_cli.version import version_line

# Libraries no command below needs: imported, each costs from 0.02 s (requests) to 1 s (langchain, langgraph).
HEAVY = (
    "langchain", "langchain_core", "langgraph", "mcp", "httpx", "requests", "openai", "anthropic", "google",
    "opentelemetry", "pydantic", "pydantic_core", "starlette", "fastapi", "uvicorn", "werkzeug", "yaml",
    "celery", "kombu", "redis", "psycopg", "psycopg_pool", "rich", "pygments", "acp",
)  # fmt: skip
PROBE = """
import atexit, gc, json, sys
def report():
    import attr._make
    cache = getattr(attr._make._compile_and_eval, "__self__", None)
    modules = sorted(sys.modules)
    print(json.dumps({
        "modules": modules,
        "attrs_compiled": None if cache is None else len(cache.compiled),
        "collector_on": gc.isenabled(),
        "collections": sum(generation["collections"] for generation in gc.get_stats()),
    }), file=sys.stderr)
atexit.register(report)
sys.argv = ["orchestra", *sys.argv[1:]]
from orchestra_cli.main import console
console()
"""
PIPELINE = """digraph G {
    start [shape=Mdiamond]
    plan [prompt="Plan $goal"]
    work [prompt="Do it"]
    exit [shape=Msquare]
    start -> plan -> work -> exit
}
"""


def probe(*args: str, cwd: Path | None = None, pycache: Path | None = None) -> dict[str, Any]:
    """What one `orchestra ARGS` process imported (every module's name) and how many attrs classes it compiled."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    if pycache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stderr.strip().splitlines()[-1])


def roots(report: dict[str, Any]) -> set[str]:
    return {name.split(".")[0] for name in report["modules"]}


def heavy(report: dict[str, Any]) -> list[str]:
    return sorted(roots(report) & set(HEAVY))


def test_the_probe_sees_modules_a_command_imports() -> None:
    found = roots(probe("--help"))
    assert "typer" in found and "orchestra_cli" in found


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "-h"], ["init", "-h"]], ids=" ".join)
def test_help_imports_nothing_heavy_and_no_domain_class(args: list[str]) -> None:
    report = probe(*args)
    assert heavy(report) == []
    found = roots(report)
    assert "pygraphviz" not in found and "orchestra_core" not in found and "attrs" not in found
    assert "dependency_injector" not in found
    # When written: 172 (typer and the stdlib), 234 for --version (importlib.metadata reads the version).
    assert len(report["modules"]) < 260, len(report["modules"])


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_alone_is_printed_before_typer_is_imported(flag: str) -> None:
    report = probe(flag)
    assert "typer" not in roots(report) and heavy(report) == []
    orchestra = Path(sys.executable).with_name("orchestra")
    done = subprocess.run([str(orchestra), flag], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, version_line() + "\n"), done.stderr


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_compile_imports_no_llm_framework(tmp_path: Path, extra: list[str]) -> None:
    path = tmp_path / "p.dot"
    path.write_text(PIPELINE)
    report = probe("compile", str(path), *extra)
    assert "orchestra_core" in roots(report)
    assert heavy(report) == []


def test_a_simulated_run_imports_only_what_it_needs_and_compiles_no_attrs_method_twice(tmp_path: Path) -> None:
    (tmp_path / "p.dot").write_text(PIPELINE)
    pycache = tmp_path / "pycache"  # sys.pycache_prefix: this test's bytecode, the attrs cache with it
    command = ["run", "p.dot", "--backend", "simulate", "--logs-root"]
    first = probe(*command, str(tmp_path / "run-1"), cwd=tmp_path, pycache=pycache)
    assert (tmp_path / "run-1" / "checkpoint.json").is_file()
    assert first["attrs_compiled"] > 100  # Orchestra's classes, compiled once ...
    second = probe(*command, str(tmp_path / "run-2"), cwd=tmp_path, pycache=pycache)
    assert second["attrs_compiled"] == 0  # ... and taken from the cache by the next process
    # The cycle collector, paused while the run started (it collected 124 times on the way), runs again for the
    # run itself (29 collections in all when written).
    assert second["collector_on"] and second["collections"] < 60, second["collections"]
    assert heavy(second) == []
    found = set(second["modules"])
    # The libraries a run truly needs are its floor: dependency-injector's wiring comes with its containers, but
    # not the starlette and pydantic it would import (HEAVY above); nor importlib.metadata (attrs' version).
    assert {"typer", "attr", "filelock", "sqlite3", "dependency_injector.providers"} <= found
    assert not found & {"importlib.metadata", "pygraphviz", "cattrs"}
    assert len(second["modules"]) < 600, len(second["modules"])  # 517 when written
