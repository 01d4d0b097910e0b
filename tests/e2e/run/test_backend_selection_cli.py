"""Backend selection through the CLI: compile's backend diagnostics, run refusing before a session, node backends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ORCHESTRA = Path(sys.executable).with_name("orchestra")
MIXED = """digraph mixed {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan"]
    implement [prompt="Build it", backend="claude-code"]
    review [prompt="Review", backend="codx"]
    start -> plan -> implement -> review -> done
}
"""
LLM_NODE = """digraph llm_node {
    start [shape=Mdiamond]; done [shape=Msquare]
    plan [prompt="Plan"]
    write [prompt="Write", backend="direct"]
    start -> plan -> write -> done
}
"""


def orchestra(*args: str | Path, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    if path is not None:
        env["PATH"] = path
    result = subprocess.run(
        [str(ORCHESTRA), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=60, env=env
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _empty_path(tmp_path: Path) -> str:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    return str(empty)


def test_compile_reports_an_unknown_backend_and_a_missing_cli_agent(tmp_path: Path) -> None:
    (tmp_path / "mixed.dot").write_text(MIXED)
    result = orchestra("compile", "mixed.dot", "--json", cwd=tmp_path, path=_empty_path(tmp_path))
    assert result.returncode == 1
    document = json.loads(result.stdout)
    found = {d["rule"]: d for d in document["diagnostics"] if d["severity"] == "error"}
    assert found["backend_known"]["node_id"] == "review"
    assert found["backend_known"]["message"] == (
        "unknown backend 'codx' (did you mean 'codex'?); known: simulate, langgraph, direct, claude-code, codex, acp"
    )
    assert found["cli_agent_executable"]["node_id"] == "implement"
    assert found["cli_agent_executable"]["fix"] == "install it or set claude_code.command in orchestra.yaml"


def test_compile_finds_the_configured_executable(tmp_path: Path) -> None:
    agent = tmp_path / "bin" / "my-claude"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\nexit 0\n")
    agent.chmod(0o755)
    (tmp_path / "orchestra.yaml").write_text(f"claude_code:\n  command: {agent}\n")
    (tmp_path / "p.dot").write_text(MIXED.replace('backend="codx"', 'backend="simulate"'))
    result = orchestra("compile", "p.dot", cwd=tmp_path, path=_empty_path(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_run_refuses_before_it_creates_a_session(tmp_path: Path) -> None:
    (tmp_path / "mixed.dot").write_text(MIXED)
    result = orchestra("run", "mixed.dot", cwd=tmp_path, path=_empty_path(tmp_path))
    assert result.returncode == 1
    assert "error [backend_known] node review" in result.stderr
    assert "error [cli_agent_executable] node implement" in result.stderr
    assert "install it or set claude_code.command in orchestra.yaml" in result.stderr
    assert result.stdout == "" and not (tmp_path / ".orchestra").exists()


def test_run_backend_codex_without_codex_refuses(tmp_path: Path) -> None:
    (tmp_path / "p.dot").write_text(LLM_NODE.replace(', backend="direct"', ""))
    result = orchestra("run", "p.dot", "--backend", "codex", cwd=tmp_path, path=_empty_path(tmp_path))
    assert result.returncode == 1 and "the codex backend runs node(s) plan, write" in result.stderr
    assert not (tmp_path / ".orchestra").exists()


def test_a_simulated_run_runs_a_node_that_names_an_llm_backend(tmp_path: Path) -> None:
    (tmp_path / "cassette.yaml").write_text("nodes:\n  write:\n    - content: 'written by the model'\n")
    (tmp_path / "orchestra.yaml").write_text(
        "backend: simulate\nproviders:\n  default: scripted\n  scripted:\n    cassette: cassette.yaml\n"
    )
    (tmp_path / "p.dot").write_text(LLM_NODE)
    result = orchestra("run", "p.dot", "--json", "--quiet", "--logs-root", tmp_path / "r", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "r" / "plan" / "response.md").read_text() == "[Simulated] Response for stage: plan"
    assert (tmp_path / "r" / "write" / "response.md").read_text() == "written by the model"
