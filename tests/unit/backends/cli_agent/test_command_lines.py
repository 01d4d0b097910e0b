"""The generic CliAgentSpec mapped to each CLI agent's flags (seed 000: "CLI agent receives MCP config",
"CLI agent write tools disabled")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from orchestra_adapters.backends.cli_agent.claude_code import ClaudeCode
from orchestra_adapters.backends.cli_agent.codex import Codex
from orchestra_adapters.backends.cli_agent.spec import CliAgentSpec
from orchestra_adapters.mcp.spec import McpServerSpec

SERVER = McpServerSpec(
    "orchestra", "/usr/bin/python3", ("-P", "-m", "orchestra_adapters.mcp", "--connect", "/s"), {"T": 'a"b'}
)


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_claude_gets_orchestras_server_alone_no_writing_tools_and_only_user_settings(tmp_path: Path) -> None:
    spec = CliAgentSpec(
        executable=("claude",), model="sonnet", mcp_servers=(SERVER,), cwd=tmp_path, extra_args=("--x",)
    )
    argv = ClaudeCode().command(spec, tmp_path)

    assert argv[:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    config = json.loads(Path(_option(argv, "--mcp-config")).read_text())
    assert config == {
        "mcpServers": {
            "orchestra": {
                "type": "stdio",
                "command": SERVER.command,
                "args": list(SERVER.args),
                "env": {"T": 'a"b'},
            }
        }
    }
    assert "--strict-mcp-config" in argv and _option(argv, "--setting-sources") == "user"
    assert _option(argv, "--tools") == ""
    assert _option(argv, "--allowedTools") == "mcp__orchestra"
    assert _option(argv, "--disallowedTools").split(",") == [
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Bash",
    ]
    assert "--model=sonnet" in argv and argv[-1] == "--x"


def test_claude_keeps_the_native_tools_named_but_never_the_writers(tmp_path: Path) -> None:
    spec = CliAgentSpec(
        executable=("claude",),
        allowed_tools=("Read", "Write", "Bash"),
        disallowed_tools=("WebFetch",),
        cwd=tmp_path,
    )
    argv = ClaudeCode().command(spec, tmp_path)
    assert _option(argv, "--tools") == "Read,Bash"
    assert _option(argv, "--disallowedTools").split(",") == [
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "WebFetch",
    ]
    assert not any(arg.startswith("--model") for arg in argv)


def test_codex_gets_the_server_as_toml_approved_and_required_and_a_read_only_sandbox(tmp_path: Path) -> None:
    spec = CliAgentSpec(
        executable=("codex",), model="gpt-x", mcp_servers=(SERVER,), cwd=tmp_path, extra_args=("-c", "k=1")
    )
    argv = Codex().command(spec, tmp_path)

    assert argv[:5] == ["codex", "exec", "--json", "--skip-git-repo-check", f"--cd={tmp_path}"]
    overrides = [argv[index + 1] for index, arg in enumerate(argv) if arg == "-c"]
    table = tomllib.loads(overrides[0].replace("mcp_servers.orchestra=", "server = ", 1))["server"]
    assert table == {"command": SERVER.command, "args": list(SERVER.args), "env": {"T": 'a"b'}}
    assert 'mcp_servers.orchestra.default_tools_approval_mode="approve"' in overrides
    assert "mcp_servers.orchestra.required=true" in overrides
    assert _option(argv, "--sandbox") == "read-only" and "--model=gpt-x" in argv
    assert argv[-3:] == ["-c", "k=1", "-"]  # orchestra.yaml's args after exec's own, the prompt on stdin


def test_codex_leaves_the_sandbox_to_args_that_choose_one(tmp_path: Path) -> None:
    spec = CliAgentSpec(executable=("codex",), cwd=tmp_path, extra_args=("--sandbox", "danger-full-access"))
    argv = Codex().command(spec, tmp_path)
    assert argv.count("--sandbox") == 1
    shell = CliAgentSpec(executable=("codex",), cwd=tmp_path, allowed_tools=("shell",))
    assert _option(Codex().command(shell, tmp_path), "--sandbox") == "workspace-write"


def test_a_model_name_that_looks_like_an_option_stays_the_models_value(tmp_path: Path) -> None:
    for adapter in (ClaudeCode(), Codex()):
        spec = CliAgentSpec(executable=("agent",), model="--dangerously-skip-permissions", cwd=tmp_path)
        argv = adapter.command(spec, tmp_path)
        assert "--model=--dangerously-skip-permissions" in argv
        assert "--dangerously-skip-permissions" not in argv


def test_claude_resumes_its_own_session_only_when_asked(tmp_path: Path) -> None:
    fresh = ClaudeCode().command(CliAgentSpec(executable=("claude",), cwd=tmp_path), tmp_path)
    spec = CliAgentSpec(executable=("claude",), cwd=tmp_path, resume_session="0b1c-session")
    resumed = ClaudeCode().command(spec, tmp_path)

    assert not any(arg.startswith("--resume") for arg in fresh)
    # one word, before the variadic tool options (which would swallow a value after them)
    assert resumed[5] == "--resume=0b1c-session" and resumed.index("--resume=0b1c-session") < resumed.index("--tools")
    assert ClaudeCode().resumes_sessions and not Codex().resumes_sessions


def test_claude_is_given_the_fallback_models_in_one_word_and_codex_none(tmp_path: Path) -> None:
    spec = CliAgentSpec(executable=("agent",), model="opus", fallback_models=("sonnet", "haiku"), cwd=tmp_path)
    assert "--fallback-model=sonnet,haiku" in ClaudeCode().command(spec, tmp_path)
    assert not any("fallback" in arg for arg in Codex().command(spec, tmp_path))
    assert not any("fallback" in arg for arg in ClaudeCode().command(CliAgentSpec(executable=("a",), cwd=tmp_path), tmp_path))
