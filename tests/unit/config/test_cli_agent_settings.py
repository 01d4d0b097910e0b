"""`claude_code:` and `codex:` in orchestra.yaml: read into `cli_agents` by backend name, mistakes located."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings, settings_from_dict
from orchestra_core.model.settings import CliAgentSettings, ConfigError, OrchestraSettings


def _load(tmp_path: Path, text: str) -> OrchestraSettings:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(path)


def test_both_sections_are_read_under_their_backend_names(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        backend: claude-code
        claude_code:
          command: ~/bin/claude
          args: [--verbose]
          model: sonnet
          tools: [Read, Grep]
          disallowed_tools: [Bash]
          timeout: 10m
          env: {CLAUDE_CONFIG_DIR: /tmp/claude}
        codex:
        """,
    )
    assert settings.cli_agents == {
        "claude-code": CliAgentSettings(
            command="~/bin/claude",
            args=("--verbose",),
            model="sonnet",
            tools=("Read", "Grep"),
            disallowed_tools=("Bash",),
            timeout=600.0,  # type: ignore[arg-type]
            env={"CLAUDE_CONFIG_DIR": "/tmp/claude"},
        ),
        "codex": CliAgentSettings(),
    }


def test_no_section_means_no_entry() -> None:
    assert OrchestraSettings().cli_agents == {}
    assert settings_from_dict({"codex": {"model": "o4"}}, project_root=Path("/p")).cli_agents == {
        "codex": CliAgentSettings(model="o4")
    }


@pytest.mark.parametrize(
    ("text", "located"),
    [
        ("claude_code:\n  comand: x\n", ":2: claude_code.comand: unknown key (did you mean command?)"),
        ("claude_code:\n  tools: Read\n", ":2: claude_code.tools: expected a list, got a string ('Read')"),
        ("codex:\n  timeout: -1\n", ":2: codex.timeout: expected a positive duration, got -1"),
        ("codex:\n  env: {A: 1}\n", ":2: codex.env.A: expected a string, got a number (1)"),
        ("claude_code: 5\n", ":1: claude_code: expected a mapping, got a number (5)"),
        ("claude-code: {}\n", ":1: claude-code: unknown key (did you mean claude_code?)"),
        ("cli_agents: {}\n", ":1: cli_agents: unknown key"),
    ],
)
def test_mistakes_name_the_file_line_and_key(tmp_path: Path, text: str, located: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    assert f"{tmp_path / 'orchestra.yaml'}{located}" in str(raised.value)


def test_the_top_level_key_list_names_the_agent_sections(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"expected one of: .*claude_code, codex"):
        _load(tmp_path, "zzzzzzzz: 1\n")
