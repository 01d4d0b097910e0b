"""`notify:` in orchestra.yaml: webhooks and commands read, every mistake located (file, line, key), and the
variables a target names checked when its notifier is built (before a run's session exists)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_adapters.notify.factory import notifier_from_settings
from orchestra_adapters.notify.targets import CommandTarget, WebhookTarget
from orchestra_core.model.settings import ConfigError, NotifyTargetSettings, OrchestraSettings


def _load(tmp_path: Path, text: str) -> OrchestraSettings:
    path = tmp_path / "orchestra.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(path, project_root=tmp_path)


def _problems(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, text)
    return [problem.render() for problem in raised.value.problems]


def test_webhooks_and_commands_are_read(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        notify:
          - url: https://hooks.example.com/orchestra
            events: [finished, failed, needs_input, budget_exceeded]
            secret_env: ORCHESTRA_HOOK_SECRET
          - url_env: SLACK_WEBHOOK_URL
            format: slack
            timeout: 5s
          - command: [notify-send, Orchestra]
            events: [needs_input]
        """,
    )
    first, slack, command = settings.notify
    assert first == NotifyTargetSettings(
        url="https://hooks.example.com/orchestra", events=("finished", "failed", "needs_input", "budget_exceeded"),
        secret_env="ORCHESTRA_HOOK_SECRET",
    )  # fmt: skip
    assert slack.url_env == "SLACK_WEBHOOK_URL" and slack.format == "slack" and slack.timeout == 5.0
    assert slack.wants("cancelled") and not command.wants("finished")
    assert command.command == ("notify-send", "Orchestra") and not command.webhook
    assert "hooks.example.com" not in repr(first)  # an address may hold a token


def test_an_unknown_event_is_named_with_its_file_line_and_key(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        """\
        notify:
          - url: https://hooks.example.com/orchestra
            events: [finished, finish]
        """,
    )
    assert problems == [
        f"{tmp_path / 'orchestra.yaml'}:3: notify[0].events[1]: expected one of finished, failed, needs_input, "
        "budget_exceeded, cancelled, interrupted, got a string ('finish')"
    ]


def test_a_webhook_that_is_not_http_is_refused_without_showing_its_secret(tmp_path: Path) -> None:
    (problem,) = _problems(
        tmp_path,
        """\
        notify:
          - url: ftp://bob:hunter2@files.example.com/drop/secret-token
        """,
    )
    assert problem.startswith(f"{tmp_path / 'orchestra.yaml'}:2: notify[0].url: expected an http(s) URL")
    assert "hunter2" not in problem and "secret-token" not in problem


def test_inconsistent_targets_are_all_reported(tmp_path: Path) -> None:
    problems = _problems(
        tmp_path,
        """\
        notify:
          - url: https://hooks.example.com/a
            command: [echo]
          - events: [failed]
          - command: [notify-send]
            secret_env: SECRET
            format: slack
          - url_env: 9LIVES
        """,
    )
    assert [problem.split(": ", 2)[1] for problem in problems] == [
        "notify[0].command", "notify[1]", "notify[2].secret_env", "notify[2].format", "notify[3].url_env",
    ]  # fmt: skip
    (problem,) = _problems(tmp_path, 'notify:\n  - command: "notify-send done"\n')
    assert ":2: notify[0].command: expected a list, got a string" in problem  # argv, never a shell line


def test_a_missing_variable_stops_the_notifier_naming_file_and_key(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        """\
        notify:
          - command: ["true"]
          - url: https://hooks.example.com/a
            secret_env: HOOK_SECRET
          - url_env: HOOK_URL
        """,
    )
    with pytest.raises(ConfigError) as raised:
        notifier_from_settings(settings, tmp_path, environ={})
    assert [problem.render() for problem in raised.value.problems] == [
        f"{tmp_path / 'orchestra.yaml'}: notify[1].secret_env: the environment variable HOOK_SECRET (the secret "
        "that signs the bodies) is not set",
        f"{tmp_path / 'orchestra.yaml'}: notify[2].url_env: the environment variable HOOK_URL (the webhook's "
        "address) is not set",
    ]
    with pytest.raises(ConfigError, match=r"notify\[2\]\.url_env: the environment variable HOOK_URL: expected an http"):
        notifier_from_settings(settings, tmp_path, environ={"HOOK_SECRET": "s", "HOOK_URL": "gopher://x/y"})
    notifier = notifier_from_settings(settings, tmp_path, environ={"HOOK_SECRET": "s", "HOOK_URL": "https://h/x/y"})
    assert [type(target) for target in notifier.targets] == [CommandTarget, WebhookTarget, WebhookTarget]
    assert [target.name for target in notifier.targets] == [
        "command true", "webhook https://hooks.example.com/a", "webhook https://h/x/…",
    ]


def test_a_command_path_is_taken_from_the_files_directory(tmp_path: Path) -> None:
    script = tmp_path / "hooks" / "tell.py"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys; open('told', 'w').write(sys.stdin.read())\n")
    script.chmod(0o755)
    settings = _load(tmp_path, "notify:\n  - command: [hooks/tell.py]\n")
    (target,) = notifier_from_settings(settings, tmp_path / "elsewhere", environ={}).targets
    assert target._argv == [str(tmp_path / "hooks" / "tell.py")]  # type: ignore[attr-defined]
