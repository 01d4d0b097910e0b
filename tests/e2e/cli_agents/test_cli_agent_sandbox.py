"""A CLI agent in the bubblewrap sandbox (`sandbox: {kind: bubblewrap}`), for real: Claude Code given its own
`Bash` writes its worktree and nothing else (not the user's checkout, home, `/tmp`, the worktree's `.git`
or Orchestra's state), and still reaches its provider and Orchestra's tools over MCP."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.cli_agents.conftest import AgentProject, codex_settings
from tests.support.fake_provider_api import FakeAnthropicAPI, FakeOpenAIResponsesAPI, Reply, ToolUse
from tests.support.orchestra_project import agent_turns, committed_files
from tests.support.sandbox import needs_bwrap

pytestmark = [pytest.mark.slow, needs_bwrap()]
MARKER = uuid.uuid4().hex  # a name under the host's /tmp no other run shares

PROBE = """probe() {{ if sh -c "$2" 2>/dev/null; then echo "$1:ok"; else echo "$1:refused"; fi; }}
probe worktree 'echo inside > inside.txt'
probe checkout 'touch {checkout}/outside.txt'
probe home 'touch "$HOME/outside.txt"'
probe tmp 'touch /tmp/orchestra-agent-escape-{marker}'
probe scratch 'touch "$TMPDIR/scratch.txt"'
probe dotgit 'echo x >> .git'
probe gitdir 'git config core.fsmonitor "touch {checkout}/pwned"'
probe state 'touch {checkout}/.orchestra/planted'
"""


def test_claude_code_s_own_shell_writes_only_its_worktree(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("claude-code")
    project.configure({"tools": ["Bash"]})
    config = json.loads((project.root / "orchestra.yaml").read_text(encoding="utf-8"))
    config["sandbox"] = {"kind": "bubblewrap"}
    (project.root / "orchestra.yaml").write_text(json.dumps(config), encoding="utf-8")
    probe = PROBE.format(checkout=project.root, marker=MARKER)
    script = [
        Reply("Probing.", [ToolUse("Bash", {"command": probe, "description": "probe"})]),
        Reply("Through Orchestra.", [ToolUse("mcp__orchestra__project__write-file", {"path": "mcp.txt", "content": "m\n"})]),
        Reply("Done."),
    ]
    with FakeAnthropicAPI(script) as api:
        result = project.run(api.base_url)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    turns = [turn for _, turn in agent_turns(project.root, document["session_id"])]
    [bash] = [call for turn in turns for call in turn.tool_calls if call.name == "Bash"]
    assert [line for line in str(bash.result).splitlines() if ":" in line] == [
        "worktree:ok", "checkout:refused", "home:refused", "tmp:refused", "scratch:ok", "dotgit:refused",
        "gitdir:refused", "state:refused",
    ]  # fmt: skip
    assert not (project.root / "outside.txt").exists() and not (project.home / "outside.txt").exists()
    assert not Path(f"/tmp/orchestra-agent-escape-{MARKER}").exists()
    assert "fsmonitor" not in (project.root / ".git" / "config").read_text(encoding="utf-8")
    assert not (project.root / ".orchestra" / "planted").exists()
    committed = {path for turn in turns if turn.git_sha for path in committed_files(project.repo, turn.git_sha)}
    assert committed == {"inside.txt", "mcp.txt"}  # the shell's file apart (untracked), the tool's as a turn


def test_codex_s_own_shell_writes_only_its_worktree(
    make_project: Callable[[str], AgentProject],
) -> None:
    project = make_project("codex")
    probe = PROBE.format(checkout=project.root, marker=MARKER)
    script = [Reply("Probing.", [ToolUse("exec_command", {"cmd": probe})]), Reply("Done.")]
    with FakeOpenAIResponsesAPI(script) as api:
        # Orchestra's sandbox confines Codex; its own (Landlock) one is turned off, as the shell test does
        project.configure({**codex_settings(api.base_url, ["--sandbox", "danger-full-access"]), "tools": ["shell"]})
        config = json.loads((project.root / "orchestra.yaml").read_text(encoding="utf-8"))
        (project.root / "orchestra.yaml").write_text(json.dumps({**config, "sandbox": {"kind": "bubblewrap"}}))
        result = project.run(api.base_url)
        outputs = [item.get("output", "") for body in api.requests for item in body.get("input", [])
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]  # fmt: skip
    assert result.returncode == 0, result.stderr + result.stdout
    probed = [line for output in outputs for line in str(output).splitlines() if line.endswith((":ok", ":refused"))]
    assert probed == [
        "worktree:ok", "checkout:refused", "home:refused", "tmp:refused", "scratch:ok", "dotgit:refused",
        "gitdir:refused", "state:refused",
    ]  # fmt: skip
    assert not (project.root / "outside.txt").exists() and not (project.home / "outside.txt").exists()
    assert "fsmonitor" not in (project.root / ".git" / "config").read_text(encoding="utf-8")
