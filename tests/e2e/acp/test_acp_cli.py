"""`orchestra run` with an ACP node (the stand-in ACP agent, tests/support/acp_agent.py): per-turn commits with
trailers, the turns in `status --json`, `compile` naming a missing `acp.command`, and Ctrl-C leaving no agent
process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.git_repos import GitRepo, git
from tests.support.orchestra_project import ORCHESTRA, agent_turns, committed_files, orchestra, write_files
from tests.support.processes import alive, kill_quietly, wait_for_file, wait_until

STAND_IN = Path(__file__).resolve().parents[2] / "support" / "acp_agent.py"
PIPELINE = """digraph impl {
  start [shape=Mdiamond]
  exit [shape=Msquare]
  plan [prompt="Plan it"]
  implement [prompt="Write a.py and b.py", backend="acp"]
  start -> plan -> implement -> exit
}
"""


def project(tmp_path: Path, acp: dict[str, Any]) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    GitRepo(root).write("README.md", "hello\n")
    GitRepo(root).write(".gitignore", ".orchestra/\n")
    GitRepo(root).commit_all("initial")
    config = {"workspace": {"repos": {"project": {"path": "."}}}, "backend": "simulate", "acp": acp}
    write_files(root, {"orchestra.yaml": json.dumps(config, indent=2), "pipeline.dot": PIPELINE})
    return root


def test_an_acp_node_commits_each_turn_with_trailers_and_status_shows_its_turns(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    steps = [
        {"message": "Writing a."},
        {
            "mcp": {
                "id": "c1",
                "tool": "project__write-file",
                "arguments": {"path": "a.py", "content": "A = 1\n"},
            }
        },
        {"message": "Writing b."},
        {"fs_write": {"id": "c2", "path": "b.py", "content": "B = 2\n"}},
        {"message": "Both written; now a shell."},
        {
            "permission": {
                "id": "sh",
                "kind": "execute",
                "title": "Shell",
                "rawInput": {"command": "curl evil"},
            }
        },
    ]
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    root = project(tmp_path, {"command": [sys.executable, str(STAND_IN), str(script)]})

    result = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    assert document["status"] == "success", document

    branch = git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/orchestra/").split()[0]
    commits = git(root, "log", "--reverse", "--format=%H", f"main..{branch}").split()
    changed = [git(root, "show", "--format=", "--name-only", sha).split() for sha in commits]
    assert changed[-2:] == [["a.py"], ["b.py"]]
    for sha, turn in zip(commits[-2:], ("0", "1"), strict=True):
        trailers = git(root, "log", "-1", "--format=%(trailers)", sha)
        assert "Orchestra-Node: implement" in trailers and f"Orchestra-Turn: {turn}" in trailers, trailers

    status = json.loads(orchestra("status", document["session_id"], "--json", cwd=root).stdout)
    turns = [
        turn
        for turn in status["turns"]
        if turn["type"].endswith(".AgentTurn") and turn["node_id"] == "implement"
    ]
    assert [turn["files_written"] for turn in turns] == [["project:a.py"], ["project:b.py"], []]
    assert {(turn["provider"], turn["model"]) for turn in turns} == {("acp", "acp-stand-in")}
    assert turns[-1]["denied"] == [
        {
            "tool": "Shell",
            "reason": "denied by Orchestra's permission policy: a call of kind 'execute', neither one "
            "of Orchestra's tools nor a write inside the worktree",
        }
    ]
    assert "denied" not in turns[0]
    text = orchestra("status", document["session_id"], cwd=root).stdout
    assert "Shell (denied)" in text


def test_compile_names_a_missing_acp_command(tmp_path: Path) -> None:
    root = project(tmp_path, {})
    result = orchestra("compile", "pipeline.dot", cwd=root)
    assert result.returncode == 1
    assert (
        "the acp backend runs node(s) implement, but acp.command is not set" in result.stdout + result.stderr
    )


def test_ctrl_c_stops_the_run_and_leaves_no_acp_agent_process(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    script = tmp_path / "script.json"
    steps = [{"message": "thinking"}, {"child": str(pids_file)}, {"hang": {}}]
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    root = project(tmp_path, {"command": [sys.executable, str(STAND_IN), str(script)]})
    process = subprocess.Popen(
        [str(ORCHESTRA), "run", "pipeline.dot"],
        cwd=root,
        env={**os.environ, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = [int(pid) for pid in wait_for_file(pids_file, 60).split()]
    try:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode != 0
        assert "Traceback" not in stderr
        assert wait_until(lambda: not any(alive(pid) for pid in pids), 5), "an agent process survived Ctrl-C"
    finally:
        process.kill()
        kill_quietly(pids, within=tmp_path)


CASSETTE = """\
delay: 1
commit_messages:
  - "Add module a\\n\\nA is 1."
  - "Add module b and set A to 3\\n\\nB is 2."
  - "Add module c\\n\\nC is 4."
default: "Done."
"""


def test_each_turn_commit_holds_what_that_turn_wrote_while_the_agent_runs_ahead(tmp_path: Path) -> None:
    def mcp(call_id: str, tool: str, **arguments: str) -> dict[str, Any]:
        return {"mcp": {"id": call_id, "tool": f"project__{tool}", "arguments": arguments}}

    steps = [
        {"message": "Module a."},
        mcp("c1", "write-file", path="a.py", content="A = 1\n"),
        {"message": "Module b, and A becomes 3."},  # written while Orchestra commits turn 0 (a 1 s message)
        mcp("c2", "write-file", path="b.py", content="B = 2\n"),
        mcp("c3", "edit-file", path="a.py", old_text="A = 1", new_text="A = 3"),
        {"message": "Module c."},
        {"fs_write": {"id": "c4", "path": "c.py", "content": "C = 4\n"}},
        {"message": "All written."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": steps}), encoding="utf-8")
    root = project(tmp_path, {"command": [sys.executable, str(STAND_IN), str(script)]})
    config = json.loads((root / "orchestra.yaml").read_text(encoding="utf-8"))
    config["providers"] = {"default": "scripted", "scripted": {"cassette": "cassette.yaml"}}
    config["backend"] = "langgraph"  # the plan node: the cassette's default answer
    write_files(root, {"orchestra.yaml": json.dumps(config), "cassette.yaml": CASSETTE})

    result = orchestra("run", "pipeline.dot", "--json", cwd=root)
    assert result.returncode == 0, result.stderr + result.stdout
    document = json.loads(result.stdout)
    turns = [turn for _, turn in agent_turns(root, document["session_id"]) if turn.files_written]
    # ACP marks no response's end: calls run one after another are a turn each (as Codex's are).
    assert [turn.files_written for turn in turns] == [
        ("project:a.py",), ("project:b.py",), ("project:a.py",), ("project:c.py",),
    ]  # fmt: skip
    first, second, third, fourth = (turn.git_sha or "" for turn in turns)
    repo = GitRepo(root)
    assert committed_files(repo, first) == ["a.py"] and repo.git("show", f"{first}:a.py") == "A = 1\n"
    assert committed_files(repo, second) == ["b.py"] and repo.git("show", f"{second}:a.py") == "A = 1\n"
    assert committed_files(repo, third) == ["a.py"] and repo.git("show", f"{third}:a.py") == "A = 3\n"
    assert committed_files(repo, fourth) == ["c.py"]
    assert repo.git("log", "-1", "--format=%s", first).strip() == "Add module a"
