"""orchestra.yaml loading: the seed's example, defaults, and errors that name file, line and key path."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_core.model.settings import ConfigError, OrchestraSettings

SEED_EXAMPLE = """\
providers:
  default: anthropic
  anthropic:
    models:
      smart: claude-opus-4-20250514
      worker: claude-sonnet-4-20250514
      cheap: claude-haiku-3-20250514
    max_tokens: 8192
  openai:
    models:
      smart: gpt-4o
      worker: gpt-4o-mini
      cheap: gpt-4o-mini
  openrouter:
    models:
      smart: anthropic/claude-opus-4
      worker: anthropic/claude-sonnet-4
      cheap: meta-llama/llama-3.1-70b
    api_base: https://openrouter.ai/api/v1

workspace:
  repos:
    backend:
      path: ../backend
      branch_prefix: orchestra/
      # remote: git@github.com:org/backend.git
    frontend:
      path: ../frontend
      branch_prefix: orchestra/
  tools:
    backend:
      run-tests:
        command: "docker compose exec app bundle exec rspec"
      run-lint:
        command: "docker compose exec app bundle exec rubocop"
    frontend:
      run-tests:
        command: "npm test"
      run-lint:
        command: "npm run lint"

agents:
  security-reviewer:
    role: security-engineer
    persona: senior-security-engineer
    personality: thorough-skeptical
    task: review-pr-security
    tools:
      - backend:read-file
      - backend:search-code
      - backend:run-tests
      - frontend:read-file
      - frontend:search-code
  synthesizer:
    role: review-synthesizer
    persona: tech-lead
    personality: balanced-decisive
    task: synthesize-review
    tools: []
"""


def write(tmp_path: Path, text: str, name: str = "orchestra.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text))
    return caught.value


def test_seed_example_loads(tmp_path: Path) -> None:
    path = write(tmp_path, SEED_EXAMPLE)
    settings = load_settings(path)
    assert settings.providers.default == "anthropic"
    assert set(settings.providers.entries) == {"anthropic", "openai", "openrouter"}
    anthropic = settings.providers.entries["anthropic"]
    assert anthropic.models["smart"] == "claude-opus-4-20250514"
    assert anthropic.max_tokens == 8192
    assert settings.providers.entries["openrouter"].api_base == "https://openrouter.ai/api/v1"
    assert settings.workspace.repos["backend"].path == "../backend"
    assert settings.workspace.repos["backend"].protected_branches == ("main", "master", "release/*")
    assert settings.workspace.tools["frontend"]["run-lint"].command == "npm run lint"
    reviewer = settings.agents["security-reviewer"]
    assert reviewer.persona == "senior-security-engineer"
    assert reviewer.tools[2] == "backend:run-tests"
    assert settings.agents["synthesizer"].tools == ()
    assert settings.source_path == path.resolve()
    assert settings.base_dir == tmp_path.resolve()


@pytest.mark.parametrize("text", ["", "# nothing configured yet\n", "---\n"])
def test_empty_file_gives_defaults(tmp_path: Path, text: str) -> None:
    settings = load_settings(write(tmp_path, text))
    assert settings.providers == OrchestraSettings().providers
    assert settings.workspace.repo_names() == ("project",)
    assert settings.storage.backend == "sqlite"
    assert settings.prompts == ("prompts",)


def test_null_sections_mean_defaults(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "providers:\nworkspace:\n  repos:\nagents:\n  plain:\n"))
    assert settings.workspace.repos == {}
    assert settings.agents["plain"].role is None


def test_unknown_key_names_file_line_and_path_with_suggestion(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """\
        workspace:
          repos:
            backend:
              path: ../backend
              branch_prefx: x/
        """,
    )
    assert str(error) == (
        f"{tmp_path / 'orchestra.yaml'}:5: workspace.repos.backend.branch_prefx: "
        "unknown key (did you mean branch_prefix?)"
    )
    assert (error.line, error.key) == (5, "workspace.repos.backend.branch_prefx")


def test_unknown_top_level_key_lists_the_known_ones(tmp_path: Path) -> None:
    error = load_error(tmp_path, "zebra: 1\n")
    assert error.line == 1
    assert "zebra: unknown key (expected one of: providers, backend, pipelines, workspace" in str(error)


def test_loader_fields_are_not_yaml_keys(tmp_path: Path) -> None:
    error = load_error(tmp_path, "source_path: /etc\n")
    assert error.key == "source_path"
    assert "unknown key" in error.detail


def test_unknown_key_inside_a_provider_uses_the_yaml_path(tmp_path: Path) -> None:
    error = load_error(tmp_path, "providers:\n  default: openai\n  openai:\n    modles: {}\n")
    assert (error.line, error.key) == (4, "providers.openai.modles")
    assert "did you mean models?" in error.detail


@pytest.mark.parametrize(
    ("text", "line", "key", "detail"),
    [
        ("workspace:\n  repos:\n    b:\n      path: 12\n", 4, "workspace.repos.b.path", "expected a string, got a number (12)"),
        ("providers:\n  openai:\n    max_tokens: lots\n", 3, "providers.openai.max_tokens", "expected an integer"),
        ("workspace:\n  repos:\n    b:\n      path: x\n      run_hooks: yes\n", 5, "workspace.repos.b.run_hooks", "expected true or false"),
        ("agents:\n  a:\n    tools: backend:read-file\n", 3, "agents.a.tools", "expected a list, got a string"),
        ("agents:\n  a:\n    tools: [x, 3]\n", 3, "agents.a.tools[1]", "expected a string"),
        ("agents: [a, b]\n", 1, "agents", "expected a mapping, got a list"),
        ("prompts: prompts\n", 1, "prompts", "expected a list"),
        ("workspace:\n  repos:\n    b:\n      path: x\n      base_ref: 2024-01-01\n", 5, "workspace.repos.b.base_ref", "got a date (2024-01-01); quote it"),
    ],
)
def test_wrong_types_are_located(tmp_path: Path, text: str, line: int, key: str, detail: str) -> None:
    error = load_error(tmp_path, text)
    assert (error.line, error.key) == (line, key)
    assert detail in error.detail


@pytest.mark.parametrize(
    ("text", "key", "choices"),
    [
        ("workspace:\n  repos:\n    b:\n      path: x\n      push: always\n", "workspace.repos.b.push", "never, on_completion, on_checkpoint"),
        ("workspace:\n  repos:\n    b:\n      path: x\n      isolation: container\n", "workspace.repos.b.isolation", "worktree, in_place"),
        ("storage:\n  backend: mysql\n", "storage.backend", "sqlite, cxdb, postgres"),
        ("agents:\n  a:\n    mode: chatty\n", "agents.a.mode", "autonomous, interactive"),
    ],
)
def test_bad_enum_values_list_the_choices(tmp_path: Path, text: str, key: str, choices: str) -> None:
    error = load_error(tmp_path, text)
    assert error.key == key
    assert f"expected one of {choices}" in error.detail


def test_missing_required_key_points_at_its_parent(tmp_path: Path) -> None:
    error = load_error(tmp_path, "workspace:\n  repos:\n    backend:\n      branch_prefix: x/\n")
    assert (error.line, error.key, error.detail) == (3, "workspace.repos.backend.path", "required key is missing")


def test_every_problem_is_reported_in_file_order(tmp_path: Path) -> None:
    error = load_error(tmp_path, "storage:\n  backend: nope\nagents:\n  a:\n    mod: x\nzz: 1\n")
    assert [problem.line for problem in error.problems] == [2, 5, 6]
    assert len(str(error).splitlines()) == 3


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("providers:\n  default: [unclosed\n", 3, "YAML syntax error"),
        ("a: 1\na: 2\n", 2, "duplicate key"),
        ("workspace:\n\trepos: {}\n", 2, "YAML syntax error"),
    ],
)
def test_yaml_syntax_errors_have_a_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    error = load_error(tmp_path, text)
    assert error.line == line
    assert fragment in str(error)
    assert str(error).startswith(f"{tmp_path / 'orchestra.yaml'}:{line}: ")


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    error = load_error(tmp_path, "- a\n- b\n")
    assert error.line == 1
    assert "top level" in error.detail


def test_unreadable_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_settings(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_settings(tmp_path)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"a: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(binary)


@pytest.mark.parametrize("name", ["back:end", "back end", "-x"])
def test_repo_names_must_be_plain(tmp_path: Path, name: str) -> None:
    error = load_error(tmp_path, f"workspace:\n  repos:\n    '{name}':\n      path: x\n")
    assert (error.line, error.key) == (3, f"workspace.repos.{name}")
    assert "no ':'" in error.detail


def test_tool_names_must_not_contain_a_colon(tmp_path: Path) -> None:
    error = load_error(tmp_path, "workspace:\n  tools:\n    project:\n      'run:tests':\n        command: make\n")
    assert (error.line, error.key) == (4, "workspace.tools.project.run:tests")


def test_tools_must_belong_to_a_configured_repo(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        "workspace:\n  repos:\n    backend: {path: b}\n  tools:\n    backnd:\n      t: {command: make}\n",
    )
    assert (error.line, error.key) == (5, "workspace.tools.backnd")
    assert "did you mean backend?" in error.detail


def test_tools_of_the_implicit_project_repo(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "workspace:\n  tools:\n    project:\n      test: {command: make test}\n"))
    assert settings.workspace.tools["project"]["test"].command == "make test"


def test_default_provider_must_be_one_of_the_configured(tmp_path: Path) -> None:
    error = load_error(tmp_path, "providers:\n  default: antropic\n  anthropic: {}\n")
    assert (error.line, error.key) == (2, "providers.default")
    assert "did you mean anthropic?" in error.detail


def test_default_provider_alone_is_allowed(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, "providers:\n  default: anthropic\n"))
    assert settings.providers.default == "anthropic"
    assert settings.providers.entries == {}


@pytest.mark.parametrize(("value", "seconds"), [("90", 90.0), ("'90s'", 90.0), ("10m", 600.0), ("1.5", 1.5)])
def test_tool_timeouts_take_numbers_or_durations(tmp_path: Path, value: str, seconds: float) -> None:
    settings = load_settings(write(tmp_path, f"workspace:\n  tools:\n    project:\n      t:\n        command: x\n        timeout: {value}\n"))
    assert settings.workspace.tools["project"]["t"].timeout == seconds


@pytest.mark.parametrize("value", ["soon", "0", "-5", "true"])
def test_bad_tool_timeouts(tmp_path: Path, value: str) -> None:
    error = load_error(tmp_path, f"workspace:\n  tools:\n    project:\n      t:\n        command: x\n        timeout: {value}\n")
    assert (error.line, error.key) == (6, "workspace.tools.project.t.timeout")


def test_tool_parameters_must_appear_in_the_command(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        "workspace:\n  tools:\n    project:\n      t:\n        command: pytest\n        parameters:\n          path: {}\n",
    )
    assert (error.line, error.key) == (7, "workspace.tools.project.t.parameters.path")
    assert "{path}" in error.detail


def test_tool_parameters_load(tmp_path: Path) -> None:
    settings = load_settings(
        write(
            tmp_path,
            """\
            workspace:
              tools:
                project:
                  test:
                    command: pytest -q {path}
                    description: Run tests
                    parameters:
                      path: {description: test file, default: tests}
            """,
        )
    )
    parameter = settings.workspace.tools["project"]["test"].parameters["path"]
    assert (parameter.description, parameter.default) == ("test file", "tests")


def test_prompts_paths_and_pipelines(tmp_path: Path) -> None:
    settings = load_settings(
        write(tmp_path, "prompts: [shared/prompts, /abs/prompts]\nbackend: langgraph\npipelines:\n  review: {backend: direct}\n")
    )
    assert settings.prompt_dirs() == (tmp_path.resolve() / "shared/prompts", Path("/abs/prompts"))
    assert settings.backend_for("review") == "direct"
    assert settings.backend_for("other") == "langgraph"


def test_storage_and_repo_options(tmp_path: Path) -> None:
    settings = load_settings(
        write(
            tmp_path,
            """\
            storage: {backend: cxdb, addr: "localhost:9009", url: "http://localhost:9010"}
            workspace:
              repos:
                app:
                  path: .
                  remote: git@example.com:org/app.git
                  push: on_completion
                  clone_depth: 50
                  protected_branches: [main, prod]
                  isolation: in_place
                  run_hooks: true
            """,
        )
    )
    repo = settings.workspace.repos["app"]
    assert (repo.push, repo.clone_depth, repo.isolation, repo.run_hooks) == ("on_completion", 50, "in_place", True)
    assert repo.protected_branches == ("main", "prod")
    assert settings.storage.addr == "localhost:9009"


@pytest.mark.parametrize(
    ("repo", "key", "detail"),
    [
        ("{path: app, push: on_checkpoint}", "workspace.repos.app.push", "needs a remote"),
        ("{path: app, clone_depth: 5}", "workspace.repos.app.clone_depth", "needs a remote"),
        ("{path: app, remote: /srv/app.git, clone_depth: 0}", "workspace.repos.app.clone_depth", "positive"),
        ("{path: app, remote: '--upload-pack=x'}", "workspace.repos.app.remote", "does not start with '-'"),
        ("{path: app, remote: ''}", "workspace.repos.app.remote", "non-empty"),
    ],
)
def test_remote_settings_are_checked(tmp_path: Path, repo: str, key: str, detail: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, f"workspace:\n  repos:\n    app: {repo}\n"))
    assert key in str(caught.value) and detail in str(caught.value)
