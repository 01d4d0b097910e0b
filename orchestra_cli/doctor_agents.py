"""`orchestra doctor`'s CLI agent lines: each agent configured (`claude_code:`, `codex:`, `acp:`) or selected by
`backend` / `pipelines`, found or not, and the version it reports (the ACP agent: found, and the `acp` library)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from typing import Any

from orchestra_cli.doctor_check import ERROR, OK, WARNING, Check

VERSION_TIMEOUT_S = 5.0


def cli_agent_checks(settings: Any, *, timeout_s: float = VERSION_TIMEOUT_S) -> list[Check]:
    """One check per CLI agent configured or in use: found (where) and `--version`.

    Not found is an error when orchestra.yaml selects the agent (`backend`, `pipelines.<name>.backend`),
    a warning when it is only configured. Agents neither configured nor selected get no line (a node's
    `backend` attribute is checked by `orchestra compile`).
    """
    from orchestra_adapters.backends.registry import (
        CLI_AGENT_BACKENDS,
        cli_agent_command,
        find_cli_agent,
        settings_key,
    )

    selected = {settings.backend, *(p.backend for p in settings.pipelines.values())}
    checks = []
    for name in CLI_AGENT_BACKENDS:
        in_use = name in selected
        if not in_use and name not in settings.cli_agents:
            continue
        label = f"cli agent {name}"
        command = cli_agent_command(name, settings)
        path = find_cli_agent(name, settings)
        if path is None:
            why = (
                "selected by orchestra.yaml's backend"
                if in_use
                else "configured but not selected by any backend"
            )
            detail = f"{command!r} not found ({why}); install it or set {settings_key(name)}.command in orchestra.yaml"
            checks.append(Check(label, ERROR if in_use else WARNING, detail))
            continue
        version, problem = agent_version(path, timeout_s)
        if problem is not None:
            checks.append(Check(label, WARNING, f"{path}: `--version` {problem}"))
        else:
            checks.append(Check(label, OK, f"{version} ({path})"))
    acp = _acp_check(settings, in_use="acp" in selected)
    return checks if acp is None else [*checks, acp]


def _acp_check(settings: Any, *, in_use: bool) -> Check | None:
    """The ACP agent's line when `acp.command` is set or `acp` selected: its program found, the `acp` extra
    installed (looked for, not imported). An ACP agent is not asked its version: its command line is its own."""
    import importlib.util

    from orchestra_adapters.backends.registry import find_acp_agent

    command = settings.acp.command
    if not in_use and not command:
        return None
    level = ERROR if in_use else WARNING
    why = "selected by orchestra.yaml's backend" if in_use else "configured but not selected by any backend"
    if not command:
        return Check(
            "acp agent", level, f"acp.command is not set ({why}); set it to the agent's program and arguments"
        )
    path = find_acp_agent(settings)
    if path is None:
        return Check(
            "acp agent",
            level,
            f"{command[0]!r} not found ({why}); install it or fix acp.command in orchestra.yaml",
        )
    if importlib.util.find_spec("acp") is None:
        return Check(
            "acp agent", level, f"{path}: the acp extra is not installed: pip install 'orchestra[acp]'"
        )
    return Check("acp agent", OK, f"{' '.join(command)} ({path})")


def agent_version(path: str, timeout_s: float = VERSION_TIMEOUT_S) -> tuple[str, str | None]:
    """The first line `path --version` prints, or a problem (it failed, or did not end within `timeout_s`).

    The command runs in its own process group with its output in files, so neither a hung agent nor a
    child it left behind holding its output open can hang doctor: on timeout the whole group is killed.
    """
    with tempfile.TemporaryFile() as out:
        try:
            process = subprocess.Popen(
                [path, "--version"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            return "", f"does not run: {error}"
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            return "", f"did not answer within {timeout_s:g} s"
        _kill_group(process)  # anything it started and left running
        out.seek(0)
        text = out.read(4096).decode("utf-8", "replace")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if code != 0:
        return first, f"exited with {code}" + (f": {first}" if first else "")
    return first or "(no version printed)", None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
