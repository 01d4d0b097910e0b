"""`orchestra doctor`'s `notify` lines: each `notify:` target, and the variables it needs (nothing is sent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestra_cli.doctor_check import ERROR, OK, Check


def notify_checks(settings: Any, project_root: Path) -> list[Check]:
    """One line per target (what it is, what it is told about), or one error per variable it needs that is not set;
    none without `notify:`."""
    if not settings.notify:
        return []
    from orchestra_adapters.notify.factory import notifier_from_settings
    from orchestra_core.model.settings import ConfigError

    try:
        notifier = notifier_from_settings(settings, project_root)
    except ConfigError as error:
        return [Check("notify", ERROR, f"{problem.key}: {problem.detail}") for problem in error.problems]
    checks = []
    for target, configured in zip(notifier.targets, settings.notify, strict=True):
        events = ", ".join(configured.events) or "every event"
        signed = ", signed" if configured.secret_env else ""
        shape = ", as a Slack message" if configured.format == "slack" else ""
        checks.append(Check("notify", OK, f"{target.name}{signed}{shape}: {events}"))
    notifier.close()
    return checks
