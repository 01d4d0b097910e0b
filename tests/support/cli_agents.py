"""The real `claude`, `codex` and `gemini` CLIs and `claude-code-acp` pinned in tests/cli_agents (installed by
`make install`), and the hermetic environments that point them at a fake provider API
(tests/support/fake_provider_api.py, fake_gemini_api.py) on loopback. Facts about their flags and output:
tests/cli_agents/README.md."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

CLI_AGENTS_DIR = Path(__file__).resolve().parents[1] / "cli_agents"
BIN_DIR = CLI_AGENTS_DIR / "node_modules" / ".bin"

# The model id for the fakes (they answer any id). Claude Code notes an unrecognized id on stderr. Codex prints
# an `error` item ("Model metadata ... not found") first, and then offers a plain tool set; for a known id
# (gpt-5.5) it also offers apply_patch and defers MCP tools behind tool_search (tests/cli_agents/README.md).
FAKE_MODEL = "fake-model"


def _binary(name: str) -> Path:
    path = BIN_DIR / name
    if not (path.exists() and os.access(path, os.X_OK)):
        reason = f"the {name} CLI is not installed at {path}: run make install (needs npm)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def claude_binary() -> Path:
    """The pinned Claude Code CLI (skips the test when missing; fails it under CI)."""
    return _binary("claude")


def codex_binary() -> Path:
    """The pinned Codex CLI (skips the test when missing; fails it under CI)."""
    return _binary("codex")


def gemini_binary() -> Path:
    """The pinned Gemini CLI (skips the test when missing; fails it under CI)."""
    return _binary("gemini")


def claude_code_acp_binary() -> Path:
    """The pinned Claude Code ACP adapter, `claude-code-acp` (skips the test when missing; fails it under CI)."""
    return _binary("claude-code-acp")


def _base_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    # TMPDIR beside CODEX_HOME, not above it: Codex refuses to put its helper binaries (the sandbox launcher
    # among them) under the temp dir, and its shell tool then fails in every sandbox mode
    (home / "tmp").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "NO_PROXY": "127.0.0.1,localhost,::1",
        "no_proxy": "127.0.0.1,localhost,::1",
        "TMPDIR": str(home / "tmp"),
    }
    return env


def claude_env(base_url: str, home: Path) -> dict[str, str]:
    """A hermetic environment for `claude` talking to a FakeAnthropicAPI at `base_url`: only PATH and what
    it needs, HOME in `home`, a dummy key, no telemetry, update checks or other non-essential traffic, and MCP
    tools offered directly in the request (not deferred behind ToolSearch)."""
    env = _base_env(home)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-fake-key",
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_BUG_COMMAND="1",
        DISABLE_COST_WARNINGS="1",
        DISABLE_NON_ESSENTIAL_MODEL_CALLS="1",
        ENABLE_TOOL_SEARCH="false",
        CLAUDE_CODE_MAX_RETRIES="0",
        IS_SANDBOX="1",
    )
    return env


def codex_env(base_url: str, home: Path) -> dict[str, str]:
    """A hermetic environment for `codex` talking to a FakeOpenAIResponsesAPI at `base_url` (which the
    command line names in its model provider, see codex_provider_args): HOME and CODEX_HOME in `home`, a dummy
    key."""
    del base_url  # Codex takes the URL from its configuration (-c model_providers...), not the environment
    env = _base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env.update(
        CODEX_HOME=str(codex_home),
        OPENAI_API_KEY="sk-fake-key",
        RUST_LOG="error",
    )
    return env


def codex_provider_args(base_url: str, model: str = FAKE_MODEL) -> list[str]:
    """The `codex exec` options that send its model requests to the fake at `base_url`."""
    provider = (
        f'{{name="fake", base_url="{base_url}", env_key="OPENAI_API_KEY", wire_api="responses", '
        "request_max_retries=0, stream_max_retries=0}"
    )
    return ["-m", model, "-c", 'model_provider="fake"', "-c", f"model_providers.fake={provider}"]


# What `gemini --acp` needs to run offline (tests/cli_agents/README.md, "Gemini CLI"): a base URL (which selects its
# "gateway" auth) and a dummy key, the model named (else "auto" asks a classifier model first), the workspace
# trusted (else it refuses stdio MCP servers), no relaunch of itself in a child node process (the parent does not
# pass SIGTERM on, so stopping the agent left the child running), and no usage statistics (settings.json).
GEMINI_SETTINGS = {"privacy": {"usageStatisticsEnabled": False}, "tools": {"useRipgrep": False}}


def gemini_env(base_url: str, home: Path, model: str = FAKE_MODEL) -> dict[str, str]:
    """A hermetic environment for `gemini --acp` talking to a FakeGeminiAPI at `base_url`: HOME in `home` with a
    settings.json that turns usage statistics off, a dummy key, the model, no telemetry."""
    env = _base_env(home)
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(GEMINI_SETTINGS, indent=2))
    env.update(
        GOOGLE_GEMINI_BASE_URL=base_url,
        GEMINI_API_KEY="fake-gemini-key",
        GEMINI_MODEL=model,
        GEMINI_CLI_TRUST_WORKSPACE="true",
        GEMINI_CLI_NO_RELAUNCH="true",
        GEMINI_TELEMETRY_ENABLED="false",
    )
    return env


def claude_code_acp_env(base_url: str, home: Path, model: str = FAKE_MODEL) -> dict[str, str]:
    """A hermetic environment for `claude-code-acp` talking to a FakeAnthropicAPI at `base_url`: Claude Code's
    (claude_env; the adapter runs the Claude Code of its Claude Agent SDK, which reads the same variables) and the
    model. The adapter picks the SDK's "default" model itself (ANTHROPIC_MODEL is overridden), so the model goes
    where that alias resolves: ANTHROPIC_DEFAULT_SONNET_MODEL."""
    env = claude_env(base_url, home)
    env["ANTHROPIC_DEFAULT_SONNET_MODEL"] = model
    return env
