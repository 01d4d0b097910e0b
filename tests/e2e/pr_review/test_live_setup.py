"""`make e2e-live` without keys says it skips and why; what it would run is valid: orchestra.live.yaml compiles
the pipeline (with the security reviewer on Claude Code as the live script makes it), and it configures the
same workspace and agents as the offline orchestra.yaml."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestra_adapters.config.yaml_source import load_yaml, plain
from tests.support.orchestra_project import orchestra
from tests.support.pr_review import EXAMPLE

CHECKOUT = EXAMPLE.parents[1]
PINNED_CLAUDE = CHECKOUT / "tests" / "cli_agents" / "node_modules" / ".bin"


def test_e2e_live_without_keys_is_skipped_with_a_message(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-C", str(CHECKOUT), "e2e-live", f"DIR={tmp_path / 'live'}"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "e2e-live: skipped: set ANTHROPIC_API_KEY OPENROUTER_API_KEY to run the PR review with real models "
        "(ANTHROPIC_API_KEY: reviewers, synthesizer, commit messages; OPENROUTER_API_KEY: the critic)"
    )
    assert not (tmp_path / "live").exists()
    one_key = subprocess.run(
        ["sh", str(EXAMPLE / "run-live.sh"), str(tmp_path / "live")],
        capture_output=True, text=True, env={**env, "ANTHROPIC_API_KEY": "set"}, timeout=60, check=False,
    )
    assert one_key.returncode == 0 and "skipped: set OPENROUTER_API_KEY to run" in one_key.stdout


def test_the_live_configuration_matches_the_offline_one_but_for_providers() -> None:
    offline = plain(load_yaml((EXAMPLE / "orchestra.yaml").read_text(), "orchestra.yaml"))
    live = plain(load_yaml((EXAMPLE / "orchestra.live.yaml").read_text(), "orchestra.live.yaml"))
    assert {key: value for key, value in offline.items() if key != "providers"} == {
        key: value for key, value in live.items() if key != "providers"
    }
    assert live["providers"]["default"] == "anthropic" and "openrouter" in live["providers"]
    assert not any("cassette" in entry for entry in live["providers"].values() if isinstance(entry, dict))


@pytest.mark.skipif(not (PINNED_CLAUDE / "claude").exists(), reason="the pinned claude CLI (make install) is missing")
def test_the_live_pipeline_compiles_with_real_providers_and_claude_code(tmp_path: Path) -> None:
    project = tmp_path / "live"
    project.mkdir()
    for name in ("pipeline.dot", "orchestra.live.yaml", "pr_diff.py"):
        shutil.copy(EXAMPLE / name, project / name)
    shutil.copytree(EXAMPLE / "prompts", project / "prompts")
    (project / "orchestra.live.yaml").rename(project / "orchestra.yaml")
    for repo in ("backend", "frontend"):
        subprocess.run(["git", "init", "-q", "-b", "main", str(project / repo)], check=True)
    made = subprocess.run(
        ["sed", 's/agent="security-reviewer",/agent="security-reviewer", backend="claude-code",/',
         str(project / "pipeline.dot")], capture_output=True, text=True, check=True,
    )
    (project / "live.dot").write_text(made.stdout, encoding="utf-8")
    env = {**os.environ, "PATH": f"{PINNED_CLAUDE}:{os.environ['PATH']}"}
    compiled = orchestra("compile", "live.dot", "--json", cwd=project, env=env)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    document = json.loads(compiled.stdout)
    nodes = {node["id"]: node["attrs"] for node in document["nodes"]}
    assert nodes["security_reviewer"]["backend"] == "claude-code"
    assert (nodes["critic"]["llm_provider"], nodes["critic"]["llm_model"]) == ("openrouter", "worker")
    assert [d for d in document["diagnostics"] if d["severity"] != "info"] == []
