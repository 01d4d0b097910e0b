"""The hermetic environment tests run in."""

from __future__ import annotations

import os
from pathlib import Path


def hermetic_env(home: Path) -> dict[str, str]:
    """The hermetic process environment every test runs in (tests/conftest.py applies it; module-scoped
    fixtures that run before it use it directly): a temporary HOME, no global git config, fixed identities,
    locale and time zone, no API keys unless ORCHESTRA_REAL_LLM=1, loopback never through a proxy (a CI
    runner's HTTP_PROXY would otherwise carry the stand-in CXDB server's HTTP reads away), no OTEL_* variable
    (a developer's collector would get the tests' traces)."""
    removed = {"ORCHESTRA_CONFIG", *(key for key in os.environ if key.startswith("OTEL_"))}
    if os.environ.get("ORCHESTRA_REAL_LLM") != "1":
        removed |= {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}
    env = {key: value for key, value in os.environ.items() if key not in removed}
    loopback = ",".join(
        dict.fromkeys([*env.get("NO_PROXY", env.get("no_proxy", "")).split(","), "127.0.0.1", "localhost", "::1"])
    ).strip(",")
    env.update(
        NO_PROXY=loopback,
        no_proxy=loopback,
        HOME=str(home),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test Author",
        GIT_AUTHOR_EMAIL="author@example.com",
        GIT_COMMITTER_NAME="Test Committer",
        GIT_COMMITTER_EMAIL="committer@example.com",
        LC_ALL="C.UTF-8",
        TZ="UTC",
    )
    return env
