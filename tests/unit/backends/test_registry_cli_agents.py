"""The registry's CLI agent backends: names, how they are built, where their executables are found."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

import orchestra_adapters.backends.cli_agent as cli_agent
from orchestra_adapters.backends import registry
from orchestra_core.model.builtin_prices import price_table
from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.settings import AcpSettings, CliAgentSettings, OrchestraSettings, SandboxSettings

PARTS: dict[str, Any] = {
    "chat_models": None,
    "resolver": None,
    "toolset": None,
    "state_path": Path("agents.db"),
}


def test_the_cli_agents_are_backends_with_the_adapters_default_commands() -> None:
    assert registry.BACKEND_NAMES == ("simulate", "langgraph", "direct", "claude-code", "codex", "acp")
    assert registry.CLI_AGENT_BACKENDS == cli_agent.CLI_AGENT_NAMES
    for name in registry.CLI_AGENT_BACKENDS:
        assert registry.DEFAULT_COMMANDS[name] == cli_agent.default_command(name)


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_create_backend_hands_the_agents_settings_and_the_runtime_to_the_cli_backend(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(cli_agent, "create_cli_backend", lambda *args: calls.append(args) or "backend")
    section = CliAgentSettings(command="/opt/agent", model="m")
    settings = OrchestraSettings(cli_agents={name: section})
    runtime = object()
    assert registry.create_backend(name, **PARTS, runtime=runtime, settings=settings) == "backend"  # type: ignore[arg-type]
    assert registry.create_backend(name, **PARTS, runtime=runtime) == "backend"  # type: ignore[arg-type]
    assert [call[:4] for call in calls] == [(name, section, runtime, None), (name, None, runtime, None)]
    assert [call[4] for call in calls] == [price_table(), price_table()]  # the turns are priced


def test_a_sandbox_in_the_settings_reaches_the_cli_backend(tmp_path: Path) -> None:
    settings = OrchestraSettings(
        sandbox=SandboxSettings(kind="bubblewrap", writable=("cache",)), project_root=tmp_path
    )
    backend = registry.create_backend("claude-code", **PARTS, runtime=object(), settings=settings)  # type: ignore[arg-type]
    assert backend.sandbox is not None and backend.sandbox.extra_writable == (str(tmp_path / "cache"),)  # type: ignore[union-attr]
    plain = registry.create_backend("claude-code", **PARTS, runtime=object(), settings=OrchestraSettings())  # type: ignore[arg-type]
    assert plain.sandbox is None  # type: ignore[union-attr]


def test_a_cli_backend_without_the_runs_runtime_is_refused() -> None:
    with pytest.raises(OrchestraError, match="claude-code backend needs the run's agent runtime"):
        registry.create_backend("claude-code", **PARTS)


def test_the_real_cli_backend_is_built_from_the_settings(tmp_path: Path) -> None:
    backend = registry.create_backend("codex", **PARTS, runtime=object(), settings=OrchestraSettings())  # type: ignore[arg-type]
    assert type(backend).__name__ == "CLIAgentBackend"


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho 1.0\n")
    path.chmod(0o755)
    return path


def test_find_cli_agent_looks_names_up_on_path_and_paths_from_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    _executable(bin_dir / "claude")
    _executable(tmp_path / "project" / "tools" / "codex")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    plain = OrchestraSettings(project_root=tmp_path / "project")
    assert registry.find_cli_agent("claude-code", plain) == str(bin_dir / "claude")
    assert registry.find_cli_agent("codex", plain) is None
    relative = OrchestraSettings(
        project_root=tmp_path / "project", cli_agents={"codex": CliAgentSettings(command="tools/codex")}
    )
    assert registry.find_cli_agent("codex", relative) == str(tmp_path / "project" / "tools" / "codex")
    (tmp_path / "project" / "tools" / "codex").chmod(0o644)
    assert registry.find_cli_agent("codex", relative) is None
    assert registry.cli_agent_command("codex", relative) == "tools/codex"
    assert registry.settings_key("claude-code") == "claude_code"


def test_the_acp_backend_is_built_from_the_acp_section_with_the_sandbox_and_prices(tmp_path: Path) -> None:
    acp = AcpSettings(command=("agent", "--acp"), env={"K": "v"}, timeout=60.0)  # type: ignore[arg-type]
    sandbox = SandboxSettings(kind="bubblewrap", writable=("cache",))
    settings = OrchestraSettings(acp=acp, sandbox=sandbox, project_root=tmp_path)
    backend: Any = registry.create_backend("acp", **PARTS, runtime=object(), settings=settings)  # type: ignore[arg-type]
    assert type(backend).__name__ == "AcpBackend" and backend.acp == acp and backend.prices == price_table()
    assert backend.sandbox is not None and backend.sandbox.extra_writable == (str(tmp_path / "cache"),)
    with pytest.raises(OrchestraError, match="acp backend needs the run's agent runtime"):
        registry.create_backend("acp", **PARTS)


def test_find_acp_agent_looks_up_the_commands_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _executable(tmp_path / "project" / "bin" / "agent")
    local = OrchestraSettings(
        acp=AcpSettings(command=("bin/agent", "--acp")), project_root=tmp_path / "project"
    )
    assert registry.find_acp_agent(local) == str(tmp_path / "project" / "bin" / "agent")
    assert registry.find_acp_agent(OrchestraSettings()) is None
    on_path = OrchestraSettings(acp=AcpSettings(command=("gemini",)))
    assert registry.find_acp_agent(on_path, which=lambda name: f"/usr/bin/{name}") == "/usr/bin/gemini"


def test_the_acp_backend_without_the_acp_library_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "acp", None)  # what an install without the extra amounts to
    with pytest.raises(
        OrchestraError, match=r"needs the agent-client-protocol library: pip install 'orchestra\[acp\]'"
    ):
        registry.create_backend("acp", **PARTS, runtime=object(), settings=OrchestraSettings())  # type: ignore[arg-type]
