"""The notifier `notify:` asks for, with its environment variables read now: a missing one stops a run before its
session exists."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from orchestra_adapters.notify.addresses import webhook_problem
from orchestra_adapters.notify.delivery import BackgroundNotifier, RetryPolicy
from orchestra_adapters.notify.targets import CommandTarget, Target, WebhookTarget
from orchestra_core.model.settings import ConfigError, ConfigProblem, NotifyTargetSettings, OrchestraSettings


def notifier_from_settings(
    settings: OrchestraSettings,
    project_root: Path,
    *,
    environ: Mapping[str, str] | None = None,
    policy: RetryPolicy | None = None,
) -> BackgroundNotifier:
    """A BackgroundNotifier over the targets of `settings.notify` (which must not be empty).

    Args:
        settings: The settings; relative command paths are taken from their file's directory.
        project_root: Where commands run.
        environ: The environment the variables (`url_env`, `secret_env`) are read from; default: this process's.
        policy: How deliveries are retried.

    Raises:
        ConfigError: A variable a target names is not set (or a `url_env` holds no http(s) URL); every problem,
            each naming the file and the key.
    """
    environ = os.environ if environ is None else environ
    targets: list[Target] = []
    problems: list[ConfigProblem] = []
    file = str(settings.source_path) if settings.source_path else None
    for index, target in enumerate(settings.notify):
        found = [ConfigProblem(detail, file, None, f"notify[{index}].{key}") for key, detail in _problems(target, environ)]
        problems += found
        if not found:
            targets.append(_target(target, settings, project_root, environ))
    if problems:
        raise ConfigError(problems)
    return BackgroundNotifier(targets, policy)


def _problems(target: NotifyTargetSettings, environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    if target.url_env is not None:
        url = environ.get(target.url_env, "").strip()
        if not url:
            yield "url_env", f"the environment variable {target.url_env} (the webhook's address) is not set"
        else:
            problem = webhook_problem(url)
            if problem is not None:
                yield "url_env", f"the environment variable {target.url_env}: {problem}"
    if target.secret_env is not None and not environ.get(target.secret_env):
        yield "secret_env", f"the environment variable {target.secret_env} (the secret that signs the bodies) is not set"


def _target(
    target: NotifyTargetSettings, settings: OrchestraSettings, project_root: Path, environ: Mapping[str, str]
) -> Target:
    if target.webhook:
        url = target.url if target.url is not None else environ[str(target.url_env)].strip()
        secret = environ[target.secret_env] if target.secret_env is not None else None
        return WebhookTarget(
            url, events=target.events, secret=secret, slack=target.format == "slack", timeout_s=target.timeout
        )
    program, *arguments = target.command
    return CommandTarget(
        [_program(program, settings), *arguments], events=target.events, cwd=str(project_root),
        timeout_s=target.timeout,
    )  # fmt: skip


def _program(program: str, settings: OrchestraSettings) -> str:
    """A name stays a name (looked up on PATH); a path has `~` expanded and is taken from orchestra.yaml's
    directory when relative."""
    if "/" not in program and not program.startswith("~"):
        return program
    return str(settings.resolve_path(program))
