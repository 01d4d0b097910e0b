"""The launch page's data (`GET /pipelines`): the project's pipelines, the `.dot` files under it, each with its
goal and what `orchestra compile` says of it, and the backends a run can take."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

MAX_PIPELINES = 200
MAX_DIAGNOSTICS = 20
# Directories that hold no pipelines of the project: version control, Orchestra's own state, dependencies.
_SKIPPED_DIRS = frozenset({"node_modules", "venv", "__pycache__", "site-packages", "dist", "build"})
_MAX_BYTES = 1 << 20


def pipeline_files(root: Path, limit: int = MAX_PIPELINES) -> tuple[list[Path], bool]:
    """The `.dot` files under `root` (hidden and dependency directories skipped, symbolic links not followed),
    sorted by path; at most `limit`, and whether more were left out."""
    found: list[Path] = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            name for name in subdirectories if not name.startswith(".") and name not in _SKIPPED_DIRS
        )
        for name in sorted(files):
            path = Path(directory) / name
            if name.endswith(".dot") and not name.startswith(".") and path.is_file() and not path.is_symlink():
                found.append(path)
                if len(found) > limit:
                    return sorted(found[:limit]), True
    return sorted(found), False


class PipelineCatalog:
    """Compiles the project's pipelines for the launch page; a file is compiled again only once it changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._compiled: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}

    def listing(self, service: Any) -> dict[str, Any]:
        """`{"pipelines": [{"path", "name", "goal", "valid", "errors", "warnings", "diagnostics", "error"}],
        "backend"}], "truncated", "backends"}`: `path` relative to the project, `backend` the one orchestra.yaml
        gives the pipeline (None: what `orchestra run` picks)."""
        from orchestra_adapters.backends.registry import BACKEND_NAMES

        root: Path = service.project_root
        files, truncated = pipeline_files(root)
        rules = list(service.container.compile_rules())
        settings = service.container.settings()
        pipelines = [self._entry(root, path, rules) for path in files]
        for entry in pipelines:
            entry["backend"] = settings.backend_for(entry["name"]) or None
        return {"pipelines": pipelines, "truncated": truncated, "backends": list(BACKEND_NAMES)}

    def _entry(self, root: Path, path: Path, rules: list[Any]) -> dict[str, Any]:
        try:
            stat = path.stat()
        except OSError as error:
            return _unreadable(root, path, error.strerror or str(error))
        key = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._compiled.get(path)
        if cached is not None and cached[0] == key:
            return dict(cached[1])
        entry = _compile(root, path, rules, stat.st_size)
        with self._lock:
            self._compiled[path] = (key, entry)
        return dict(entry)


def _unreadable(root: Path, path: Path, why: str) -> dict[str, Any]:
    return {
        "path": path.relative_to(root).as_posix(), "name": path.stem, "goal": "", "valid": False,
        "errors": 1, "warnings": 0, "diagnostics": [], "error": why,
    }


def _compile(root: Path, path: Path, rules: list[Any], size: int) -> dict[str, Any]:
    from orchestra_core.graph.dot_loader import parse_dot
    from orchestra_core.model.errors import OrchestraError
    from orchestra_core.pipeline import prepare_pipeline
    from orchestra_core.validation import Severity

    if size > _MAX_BYTES:
        return _unreadable(root, path, f"larger than {_MAX_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8")
        prepared = prepare_pipeline(parse_dot(text, path=str(path)), extra_rules=rules)
    except (OSError, UnicodeDecodeError) as error:
        return _unreadable(root, path, str(getattr(error, "strerror", None) or error))
    except OrchestraError as error:
        return _unreadable(root, path, str(error))
    diagnostics = prepared.diagnostics
    errors = sum(1 for d in diagnostics if d.severity == Severity.ERROR)
    return {
        "path": path.relative_to(root).as_posix(),
        "name": prepared.graph.name or path.stem,
        "goal": prepared.graph.goal,
        "valid": prepared.valid,
        "errors": errors,
        "warnings": len(diagnostics) - errors,
        "diagnostics": [
            {"severity": d.severity.value, "rule": d.rule, "message": d.message, "node_id": d.node_id}
            for d in diagnostics[:MAX_DIAGNOSTICS]
        ],
        "error": None,
    }


def budget_of(value: Any) -> Any:
    """The run's Budget from a submission's `budget` (`{"max_cost", "max_tokens", "max_wall_time"}`, each as
    `orchestra run`'s `--max-cost`, `--max-tokens`, `--max-wall-time` take it); None without one.

    Raises:
        ValueError: Not an object, an unknown key, or a value that is not a positive amount (the message says).
    """
    from orchestra_core.model.budget import (
        Budget,
        BudgetValueError,
        parse_cost,
        parse_tokens,
        parse_wall_time,
    )

    if value is None:
        return None
    parsers = {"max_cost": parse_cost, "max_tokens": parse_tokens, "max_wall_time": parse_wall_time}
    if not isinstance(value, dict) or not set(value) <= set(parsers):
        raise ValueError(f'"budget" must be an object with {", ".join(parsers)} (each optional)')
    parsed: dict[str, Any] = {}
    for key, parse in parsers.items():
        raw = value.get(key)
        if raw is None or raw == "":
            continue
        try:
            parsed[key] = parse(str(raw))
        except BudgetValueError as error:
            raise ValueError(f"budget {key}: {error}") from None
    if not parsed:
        return None
    return Budget(parsed.get("max_cost"), parsed.get("max_tokens"), parsed.get("max_wall_time"))
