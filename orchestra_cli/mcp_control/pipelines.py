"""The project's pipelines as the control server shows them: where they are, their goal, whether they compile."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestra_core.pipeline import PreparedPipeline

MAX_LISTED = 200
# Directories that hold no pipelines of the project: its state, git's, dependencies and caches.
SKIPPED_DIRS = frozenset({".git", ".orchestra", "node_modules", "__pycache__", ".venv", "venv", ".tox"})


class OutsideProjectError(ValueError):
    """A path the control server was given leaves its project (the message says which and where)."""


def project_path(root: Path, path: str) -> Path:
    """`path` (relative to the project) resolved, symlinks followed, refused when it leaves the project; the
    message is `orchestra serve`'s for the same request.

    Raises:
        OutsideProjectError: `path` is empty, or it (or a symlink on the way) leads outside `root` or into its
            `.git` or `.orchestra`.
    """
    from orchestra_adapters.server.service import PipelineService, RequestError

    try:
        resolved = PipelineService.checked_path(root, path)
    except RequestError as error:
        raise OutsideProjectError(str(error)) from None
    inside = resolved.relative_to(root).parts
    hidden = next((part for part in inside if part in (".git", ".orchestra")), None)
    if hidden is not None:
        raise OutsideProjectError(f"path {path!r} is inside {hidden}, which holds no pipelines of the project")
    return resolved


def find_pipelines(root: Path, limit: int = MAX_LISTED) -> tuple[list[Path], bool]:
    """The `.dot` files under `root` (not in SKIPPED_DIRS or hidden directories, no symlinks followed out), in
    path order; and whether more than `limit` were found."""
    found: list[Path] = []
    for path in _walk(root):
        if len(found) == limit:
            return found, True
        found.append(path)
    return found, False


def _walk(root: Path) -> Iterator[Path]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(directory, name)
            if name.endswith(".dot") and path.resolve().is_relative_to(root) and path.is_file():
                yield path


def compile_at(root: Path, path: Path, config: Path | None) -> PreparedPipeline:
    """The pipeline at `path` compiled as `orchestra compile` does (its container's extra lint rules).

    Raises:
        OrchestraError: The file cannot be read or parsed, or the configuration is bad.
    """
    from orchestra_adapters.container import build_container, close_container
    from orchestra_core.pipeline import prepare_pipeline

    container = build_container(config_path=config, pipeline_path=path, cwd=root)
    try:
        return prepare_pipeline(path, extra_rules=list(container.compile_rules()))
    finally:
        close_container(container)


def pipeline_entry(root: Path, path: Path, config: Path | None) -> dict[str, Any]:
    """One pipeline of `list_pipelines`: its path, graph name, goal, whether it compiles, its problems."""
    from orchestra_core.model.errors import OrchestraError

    relative = str(path.relative_to(root))
    try:
        prepared = compile_at(root, path, config)
    except OrchestraError as error:
        return {"path": relative, "name": None, "goal": None, "valid": False, "errors": 1, "warnings": 0,
                "problem": str(error)}
    graph = prepared.graph
    return {
        "path": relative,
        "name": graph.name,
        "goal": graph.goal or None,
        "valid": prepared.valid,
        "errors": len(prepared.errors),
        "warnings": len(prepared.diagnostics) - len(prepared.errors),
    }
