"""The core never imports an adapter library (DESIGN.md, rules of the house)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "orchestra_core"
FORBIDDEN = {
    "subprocess",
    "sqlite3",
    "requests",
    "httpx",
    "langchain",
    "langchain_core",
    "langgraph",
    "mcp",
    "ruamel",
    "dependency_injector",
    "typer",
    "rich",
    "click",
    "msgpack",
    "blake3",
    "zstandard",
    "orchestra_adapters",
    "orchestra_cli",
}


def _imported_roots(tree: ast.AST) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def _core_files() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def test_core_has_modules() -> None:
    assert len(_core_files()) > 10


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_adapter_library(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = _imported_roots(tree) & FORBIDDEN
    assert not bad, f"{path.relative_to(CORE.parent)} imports {sorted(bad)}; move it behind a port"


def test_checker_sees_forbidden_imports() -> None:
    assert _imported_roots(ast.parse("import sqlite3\nfrom langgraph.graph import X\n")) == {"sqlite3", "langgraph"}
