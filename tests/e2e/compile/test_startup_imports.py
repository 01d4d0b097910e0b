"""`orchestra --help` and `orchestra compile` stay light: no LLM framework is imported on their paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("langchain", "langchain_core", "langgraph", "mcp", "httpx", "openai", "anthropic", "opentelemetry", "google")
PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr))
sys.argv = ["orchestra", *sys.argv[1:]]
from orchestra_cli.main import main
main()
"""


def imported_roots(*args: str) -> set[str]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode in (0, 1), result.stderr
    return set(json.loads(result.stderr.strip().splitlines()[-1]))


def test_the_probe_sees_modules_a_command_imports() -> None:
    roots = imported_roots("--help")
    assert "typer" in roots and "orchestra_cli" in roots


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "-h"], ["init", "-h"]], ids=" ".join)
def test_help_imports_nothing_heavy(args: list[str]) -> None:
    roots = imported_roots(*args)
    assert not roots & set(HEAVY), sorted(roots & set(HEAVY))
    assert "pygraphviz" not in roots and "rich" not in roots


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_compile_imports_no_llm_framework(tmp_path: Path, extra: list[str]) -> None:
    path = tmp_path / "p.dot"
    path.write_text(
        "digraph G { start [shape=Mdiamond]\n w [prompt=x]\n exit [shape=Msquare]\n start -> w -> exit }"
    )
    roots = imported_roots("compile", str(path), *extra)
    assert "orchestra_core" in roots
    assert not roots & set(HEAVY), sorted(roots & set(HEAVY))
