"""Prompt layer files: the seed's shapes, discovery order, and located errors for malformed files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.prompt_files import YamlPromptLibrary, prompt_library_for, prompt_roots
from orchestra_core.model.prompt_layers import LayerKind
from orchestra_core.model.settings import ConfigError, OrchestraSettings


def layer_file(root: Path, kind: str, name: str, text: str, extension: str = ".yaml") -> Path:
    path = root / kind / f"{name}{extension}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_example_library_has_the_seed_layers(examples_dir: Path) -> None:
    library = YamlPromptLibrary([examples_dir / "pr-review" / "prompts"])
    role = library.find(LayerKind.ROLE, "security-engineer")
    persona = library.find(LayerKind.PERSONA, "senior-security-engineer")
    personality = library.find(LayerKind.PERSONALITY, "thorough-skeptical")
    task = library.find(LayerKind.TASK, "review-pr-security")
    assert role.text.startswith("You are a security engineer reviewing a pull request before it is merged.\n")
    assert persona.extends == "security-engineer"
    assert "guilty\nuntil proven innocent" in personality.text
    assert "{{ pr_diff }}" in task.text
    assert task.source.endswith("tasks/review-pr-security.yaml")
    assert task.text_line == 4


def test_first_root_wins_and_later_roots_fill_in(tmp_path: Path) -> None:
    near, far = tmp_path / "near", tmp_path / "far"
    layer_file(near, "roles", "engineer", "role: {name: engineer, system: near}\n")
    layer_file(far, "roles", "engineer", "role: {name: engineer, system: far}\n")
    layer_file(far, "roles", "architect", "role: {system: far architect}\n")
    library = YamlPromptLibrary([near, far])
    assert library.find(LayerKind.ROLE, "engineer").text == "near"
    assert library.find(LayerKind.ROLE, "architect").text == "far architect"
    assert library.find(LayerKind.ROLE, "nobody") is None


def test_yml_extension_is_accepted(tmp_path: Path) -> None:
    layer_file(tmp_path, "personalities", "terse", "personality: {modifiers: Be terse.}\n", ".yml")
    assert YamlPromptLibrary([tmp_path]).find(LayerKind.PERSONALITY, "terse").text == "Be terse."


def test_locations_follow_the_roots(tmp_path: Path) -> None:
    library = YamlPromptLibrary([tmp_path / "a", tmp_path / "b", tmp_path / "a"])
    assert library.locations(LayerKind.PERSONA) == (str(tmp_path / "a" / "personas"), str(tmp_path / "b" / "personas"))


@pytest.mark.parametrize(
    ("kind", "text", "line", "key", "fragment"),
    [
        ("roles", "persona:\n  modifiers: x\n", 1, "persona", "unknown key (expected one of: role)"),
        ("roles", "role:\n  name: engineer\n", 1, "role.system", "required key is missing"),
        ("roles", "role:\n  name: engineer\n  sytem: hi\n", 3, "role.sytem", "did you mean system?"),
        ("tasks", "task:\n  template: [a, b]\n", 2, "task.template", "expected a string, got a list"),
        ("personas", "persona:\n  extends: 3\n  modifiers: x\n", 2, "persona.extends", "expected a string"),
    ],
)
def test_malformed_layer_files_are_located(
    tmp_path: Path, kind: str, text: str, line: int, key: str, fragment: str
) -> None:
    path = layer_file(tmp_path, kind, "engineer", text)
    library = YamlPromptLibrary([tmp_path])
    with pytest.raises(ConfigError) as caught:
        library.find(next(k for k in LayerKind if k.directory == kind), "engineer")
    problem = next(problem for problem in caught.value.problems if problem.key == key)
    assert (problem.file, problem.line) == (str(path), line)
    assert fragment in problem.detail


def test_layer_file_must_be_a_mapping(tmp_path: Path) -> None:
    layer_file(tmp_path, "tasks", "fix", "- just a list\n")
    with pytest.raises(ConfigError, match="expected a mapping with a task: key"):
        YamlPromptLibrary([tmp_path]).find(LayerKind.TASK, "fix")


def test_yaml_syntax_error_in_a_layer_file(tmp_path: Path) -> None:
    path = layer_file(tmp_path, "tasks", "fix", "task:\n  template: |\n    ok\n  name: [fix\n")
    with pytest.raises(ConfigError) as caught:
        YamlPromptLibrary([tmp_path]).find(LayerKind.TASK, "fix")
    assert caught.value.file == str(path)
    assert caught.value.line is not None


def test_name_inside_must_match_the_file_name(tmp_path: Path) -> None:
    layer_file(tmp_path, "roles", "engineer", "role:\n  system: x\n  name: architect\n")
    with pytest.raises(ConfigError) as caught:
        YamlPromptLibrary([tmp_path]).find(LayerKind.ROLE, "engineer")
    assert (caught.value.line, caught.value.key) == (3, "role.name")


@pytest.mark.parametrize("name", ["../secrets", "a/b", "", ".hidden"])
def test_layer_names_are_plain_file_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="not a layer file name"):
        YamlPromptLibrary([tmp_path]).find(LayerKind.ROLE, name)


def test_parsed_files_are_cached(tmp_path: Path) -> None:
    path = layer_file(tmp_path, "roles", "engineer", "role: {system: first}\n")
    library = YamlPromptLibrary([tmp_path])
    assert library.find(LayerKind.ROLE, "engineer").text == "first"
    path.write_text("role: {system: second}\n", encoding="utf-8")
    assert library.find(LayerKind.ROLE, "engineer").text == "first"
    assert YamlPromptLibrary([tmp_path]).find(LayerKind.ROLE, "engineer").text == "second"


def test_search_order_pipeline_then_config_paths_then_home(tmp_path: Path) -> None:
    pipeline = tmp_path / "pipelines" / "review.dot"
    settings = OrchestraSettings(prompts=("shared", "/opt/prompts"), source_path=tmp_path / "orchestra.yaml")
    assert prompt_roots(settings, pipeline) == [
        (tmp_path / "pipelines" / "prompts").resolve(),
        tmp_path / "shared",
        Path("/opt/prompts"),
        Path.home() / ".orchestra" / "prompts",
    ]


def test_discovery_chain_resolves_through_every_level(tmp_path: Path) -> None:
    pipeline = tmp_path / "pipelines" / "review.dot"
    layer_file(tmp_path / "pipelines" / "prompts", "roles", "engineer", "role: {system: pipeline-level}\n")
    layer_file(tmp_path / "prompts", "roles", "engineer", "role: {system: project-level}\n")
    layer_file(tmp_path / "prompts", "roles", "architect", "role: {system: project architect}\n")
    layer_file(Path.home() / ".orchestra" / "prompts", "roles", "auditor", "role: {system: global auditor}\n")
    settings = OrchestraSettings(source_path=tmp_path / "orchestra.yaml")
    library = prompt_library_for(settings, pipeline)
    assert library.find(LayerKind.ROLE, "engineer").text == "pipeline-level"
    assert library.find(LayerKind.ROLE, "architect").text == "project architect"
    assert library.find(LayerKind.ROLE, "auditor").text == "global auditor"
