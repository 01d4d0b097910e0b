"""`acp:` in orchestra.yaml: the ACP agent's command line, environment and time limit; mistakes located."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_core.model.settings import AcpSettings, ConfigError, OrchestraSettings


def _load(tmp_path: Path, text: str) -> OrchestraSettings:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(path)


def test_the_section_is_read(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        backend: acp
        acp:
          command: [gemini, --experimental-acp]
          env: {GEMINI_API_KEY: k}
          timeout: 15m
          auth_method: gemini-api-key
          model: gemini-2.5-pro
        """,
    )
    assert settings.backend == "acp"
    assert settings.acp == AcpSettings(
        command=("gemini", "--experimental-acp"),
        env={"GEMINI_API_KEY": "k"},
        timeout=900.0,  # type: ignore[arg-type]
        auth_method="gemini-api-key",
        model="gemini-2.5-pro",
    )


def test_no_section_means_no_command() -> None:
    assert OrchestraSettings().acp == AcpSettings()


@pytest.mark.parametrize(
    ("text", "located"),
    [
        ("acp:\n  command: gemini --experimental-acp\n", ":2: acp.command: expected a list, got a string"),
        ("acp:\n  command: [gemini, 5]\n", ":2: acp.command[1]: expected a string, got a number (5)"),
        ("acp:\n  comand: [x]\n", ":2: acp.comand: unknown key (did you mean command?)"),
        ("acp:\n  env: {A: 1}\n", ":2: acp.env.A: expected a string, got a number (1)"),
        ("acp:\n  timeout: soon\n", ":2: acp.timeout: expected a duration such as 90, 90s, 10m or 1h"),
        ("acp: [gemini]\n", ":1: acp: expected a mapping, got a list"),
        ("acp:\n  model: [a]\n", ":2: acp.model: expected a string, got a list"),
    ],
)
def test_mistakes_name_the_file_line_and_key(tmp_path: Path, text: str, located: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    assert f"{tmp_path / 'orchestra.yaml'}{located}" in str(raised.value)
