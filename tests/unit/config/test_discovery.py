"""Which orchestra.yaml applies: --config, $ORCHESTRA_CONFIG, next to the pipeline, project, ~/.orchestra."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import discover_settings, find_project_root
from orchestra_core.model.settings import ConfigError


def config(directory: Path, backend: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "orchestra.yaml"
    path.write_text(f"backend: {backend}\n", encoding="utf-8")
    return path


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """project/ with orchestra.yaml, project/pipelines/ with its own, project/src/deep as cwd, a home config."""
    project = tmp_path / "project"
    config(project, "project")
    pipelines = project / "pipelines"
    config(pipelines, "pipeline-dir")
    (pipelines / "review.dot").write_text("digraph review {}\n", encoding="utf-8")
    cwd = project / "src" / "deep"
    cwd.mkdir(parents=True)
    config(Path.home() / ".orchestra", "home")
    return {"project": project, "pipeline": pipelines / "review.dot", "cwd": cwd}


def test_explicit_config_wins(layout: dict[str, Path], tmp_path: Path) -> None:
    explicit = config(tmp_path / "elsewhere", "explicit")
    settings = discover_settings(layout["pipeline"], explicit, layout["cwd"])
    assert settings.backend == "explicit"
    assert settings.source_path == explicit.resolve()
    assert settings.project_root == layout["project"].resolve()


def test_environment_variable_comes_after_explicit(
    layout: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORCHESTRA_CONFIG", str(config(tmp_path / "env", "env")))
    assert discover_settings(layout["pipeline"], None, layout["cwd"]).backend == "env"
    explicit = config(tmp_path / "explicit", "explicit")
    assert discover_settings(layout["pipeline"], explicit, layout["cwd"]).backend == "explicit"


def test_next_to_the_pipeline_before_the_project(layout: dict[str, Path]) -> None:
    assert discover_settings(layout["pipeline"], None, layout["cwd"]).backend == "pipeline-dir"


def test_project_config_when_the_pipeline_has_none(layout: dict[str, Path]) -> None:
    (layout["pipeline"].parent / "orchestra.yaml").unlink()
    settings = discover_settings(layout["pipeline"], None, layout["cwd"])
    assert settings.backend == "project"
    assert settings.base_dir == layout["project"].resolve()


def test_project_config_without_a_pipeline(layout: dict[str, Path]) -> None:
    assert discover_settings(None, None, layout["cwd"]).backend == "project"


def test_home_config_is_the_fallback(tmp_path: Path) -> None:
    config(Path.home() / ".orchestra", "home")
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    settings = discover_settings(lonely / "p.dot", None, lonely)
    assert settings.backend == "home"
    assert settings.project_root == lonely.resolve()


def test_nothing_found_gives_defaults_rooted_at_the_project(tmp_path: Path) -> None:
    settings = discover_settings(None, None, tmp_path)
    assert settings.source_path is None
    assert settings.backend is None
    assert settings.base_dir == tmp_path.resolve()


def test_a_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        discover_settings(None, tmp_path / "nope.yaml", tmp_path)


def test_an_invalid_discovered_file_is_an_error_not_skipped(layout: dict[str, Path]) -> None:
    (layout["pipeline"].parent / "orchestra.yaml").write_text("bakend: x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="did you mean backend"):
        discover_settings(layout["pipeline"], None, layout["cwd"])


def test_project_root_by_orchestra_yaml_or_state_dir(tmp_path: Path) -> None:
    by_state = tmp_path / "a"
    (by_state / ".orchestra").mkdir(parents=True)
    (by_state / "x" / "y").mkdir(parents=True)
    assert find_project_root(by_state / "x" / "y") == by_state.resolve()
    nested = by_state / "x"
    config(nested, "nested")
    assert find_project_root(nested / "y") == nested.resolve()


def test_project_root_defaults_to_cwd(tmp_path: Path) -> None:
    assert find_project_root(tmp_path) == tmp_path.resolve()


def test_home_state_dir_is_not_a_project_marker(tmp_path: Path) -> None:
    home = Path.home()
    (home / ".orchestra").mkdir(exist_ok=True)
    work = home / "code" / "thing"
    work.mkdir(parents=True)
    assert find_project_root(work) == work.resolve()


def test_relative_paths_are_taken_from_cwd(layout: dict[str, Path], tmp_path: Path) -> None:
    config(tmp_path / "elsewhere", "explicit")
    assert discover_settings(None, Path("../elsewhere/orchestra.yaml"), tmp_path / "project").backend == "explicit"
    (layout["pipeline"].parent / "orchestra.yaml").unlink()
    relative_pipeline = Path("pipelines/review.dot")
    config(layout["project"] / "pipelines", "relative")
    assert discover_settings(relative_pipeline, None, layout["project"]).backend == "relative"
