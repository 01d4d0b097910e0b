"""One `orchestra run` with a scripted LangGraph agent in a repo outside the project, checked row by row
against seed 000's tables: session branch, per-turn commits, messages, metadata, records, correlation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model.records import CheckpointRecord
from orchestra_core.model.workspace_events import SessionBranchCreated, WorktreeCreated
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo, git, make_repo
from tests.support.orchestra_project import (
    SCRIPTED_PROVIDER,
    agent_turns,
    checkout_fingerprint,
    committed_files,
    orchestra,
    records_of,
    run_json,
    trailers,
    write_files,
)

PIPELINE = """digraph lifecycle {
    graph [goal="Add three modules"]
    start     [shape=Mdiamond]
    exit      [shape=Msquare]
    plan      [prompt="Read the README, then plan: $goal"]
    mess      [shape=parallelogram, tool_command="echo scratch > scratch.txt && echo changed >> README.md"]
    implement [prompt="Write the modules", llm_model="claude-sonnet-4"]
    start -> plan -> mess -> implement -> exit
}
"""
CASSETTE = r"""
nodes:
  plan:
    - content: "Let me read the README."
      tool_calls:
        - {name: "app:read-file", args: {path: README.md}}
    - content: "Plan: add a.py, src/b.py and c.py, one per turn."
  implement:
    - content: "Adding a.py."
      tool_calls:
        - {name: "app:write-file", args: {path: a.py, content: "A = 1\n"}}
    - content: "Adding src/b.py."
      tool_calls:
        - {name: "app:write-file", args: {path: src/b.py, content: "B = 2\n"}}
    - content: "Adding c.py."
      tool_calls:
        - {name: "app:write-file", args: {path: c.py, content: "C = 3\n"}}
    - content: "All three modules are written."
commit_messages:
  - "Add module a\n\nDefines A for the callers."
  - "Added module b with a summary line that runs on far beyond the seventy-two characters allowed\n\nDefines B."
  - "```\nAdd module c\n\nDefines C.\n```"
default: "Done."
"""
BRANCH = "orchestra/lifecycle/1"
WRITES = [("a.py", "A = 1\n"), ("src/b.py", "B = 2\n"), ("c.py", "C = 3\n")]


@frozen
class Lifecycle:
    project: Path
    app: GitRepo
    env: dict[str, str]
    document: dict[str, Any]
    base: str
    before: dict[str, Any]

    @property
    def commits(self) -> list[str]:
        """The agent's commits on the session branch, oldest first (after the tool stage's)."""
        return list(reversed(self.app.log(f"{self.base}..{BRANCH}")))[1:]

    @property
    def tool_commit(self) -> str:
        """The commit of the tool stage `mess`, the first on the session branch."""
        return self.app.log(f"{self.base}..{BRANCH}")[-1]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Lifecycle:
    root = tmp_path_factory.mktemp("lifecycle")
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    app = make_repo(root / "app", {"README.md": "# App\n", "notes.md": "notes\n"})
    base = app.head()
    app.write("notes.md", "edited, not staged\n")
    app.write("staged.txt", "staged\n")
    app.git("add", "staged.txt")
    app.write("untracked.txt", "mine\n")
    before = checkout_fingerprint(app)
    project = root / "project"
    workspace = "workspace:\n  repos:\n    app:\n      path: ../app\n"
    write_files(
        project,
        {
            "orchestra.yaml": SCRIPTED_PROVIDER + workspace,
            "lifecycle.dot": PIPELINE,
            "cassette.yaml": CASSETTE,
        },
    )
    document = run_json("run", "lifecycle.dot", cwd=project, env=env)
    return Lifecycle(project, app, env, document, base, before)


def test_session_branch_is_created_named_from_the_recorded_base_and_kept(run: Lifecycle) -> None:
    assert run.document["status"] == "success" and run.document["session_id"] == "1"
    assert BRANCH in run.app.branches()
    [(_, created)] = records_of(run.project, "1", SessionBranchCreated)
    assert (created.repo, created.branch, created.base_sha, created.base_ref) == (
        "app",
        BRANCH,
        run.base,
        "HEAD",
    )
    [(_, worktree)] = records_of(run.project, "1", WorktreeCreated)
    assert Path(worktree.path) == run.project / ".orchestra" / "worktrees" / "1" / "app"
    assert git(Path(worktree.path), "symbolic-ref", "--short", "HEAD").strip() == BRANCH


def test_run_json_reports_each_repos_branch_base_and_head(run: Lifecycle) -> None:
    assert run.document["repos"] == {
        "app": {"branch": BRANCH, "base_sha": run.base, "head_sha": run.app.head(BRANCH)}
    }


def test_each_write_turn_commits_exactly_its_file(run: Lifecycle) -> None:
    assert [committed_files(run.app, sha) for sha in run.commits] == [["a.py"], ["src/b.py"], ["c.py"]]
    for sha, (path, content) in zip(run.commits, WRITES, strict=True):
        assert run.app.show(sha, path) == content
    worktree = run.project / ".orchestra" / "worktrees" / "1" / "app"
    # The tool stage's changes are its own commit, a turn of `mess`; the agent's commits hold none of them.
    assert committed_files(run.app, run.tool_commit) == ["README.md", "scratch.txt"]
    assert run.app.status(worktree) == ""
    assert run.app.show(BRANCH, "README.md") == "# App\nchanged\n"
    assert trailers(run.app, run.tool_commit) == {
        "Orchestra-Model": "tool_command",
        "Orchestra-Provider": "tool",
        "Orchestra-Node": "mess",
        "Orchestra-Pipeline": "lifecycle",
        "Orchestra-Session": "1",
        "Orchestra-Turn": "0",
        "Orchestra-Command": "echo scratch > scratch.txt && echo changed >> README.md",
        "Orchestra-Exit-Code": "0",
    }
    people = run.app.git("log", "-1", "--format=%an <%ae>|%s", run.tool_commit).strip()
    assert people == "mess (tool_command) <orchestra@local>|Tool stage mess: echo scratch > scratch.txt && echo changed >> README.md"


def test_commit_messages_come_from_the_cheap_model_cleaned(run: Lifecycle) -> None:
    messages = [run.app.git("log", "-1", "--format=%B", sha).rstrip("\n") for sha in run.commits]
    subjects = [message.split("\n", 1)[0] for message in messages]
    assert subjects[0] == "Add module a" and subjects[2] == "Add module c"
    assert subjects[1].startswith("Add module b with a summary line") and len(subjects[1]) <= 72
    for message in messages:
        summary, blank, body = message.split("\n")[:3]
        assert len(summary) <= 72 and blank == "" and body.startswith("Defines ")
        assert "```" not in message
    assert "Defines A for the callers." in messages[0]


def test_author_committer_and_trailers_name_the_agent_and_the_turn(run: Lifecycle) -> None:
    for number, sha in enumerate(run.commits):
        people = run.app.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", sha).strip()
        assert people == "implement (claude-sonnet-4) <orchestra@local>|Orchestra <orchestra@local>"
        assert trailers(run.app, sha) == {
            "Orchestra-Model": "claude-sonnet-4",
            "Orchestra-Provider": "scripted",
            "Orchestra-Node": "implement",
            "Orchestra-Pipeline": "lifecycle",
            "Orchestra-Session": "1",
            "Orchestra-Turn": str(number),
        }


def test_every_agent_turn_is_recorded_with_its_commit_or_none(run: Lifecycle) -> None:
    turns = [record for _, record in agent_turns(run.project, "1")]
    assert [(r.node_id, r.turn_number) for r in turns] == [("plan", 0), ("plan", 1), ("mess", 0)] + [
        ("implement", n) for n in range(4)
    ]
    tool = turns.pop(2)
    assert (tool.git_sha, tool.files_written, tool.model, tool.provider) == (
        run.tool_commit, ("app:README.md", "app:scratch.txt"), "tool_command", "tool",
    )
    assert [(call.name, dict(call.args), call.result) for call in tool.tool_calls] == [
        ("shell", {"command": "echo scratch > scratch.txt && echo changed >> README.md"}, "exit code 0")
    ]
    assert [r.git_sha for r in turns] == [None, None, *run.commits, None]
    assert [r.files_written for r in turns] == [(), (), ("app:a.py",), ("app:src/b.py",), ("app:c.py",), ()]
    for record in turns:
        assert record.provider == "scripted" and record.agent_state_ref.startswith("langgraph:")
        assert record.model == ("claude-sonnet-4" if record.node_id == "implement" else "scripted")
        assert any(m.get("role") == "assistant" for m in record.messages)
        if record.git_sha:
            [commit] = record.commits
            assert (commit.repo, commit.sha, commit.branch) == ("app", record.git_sha, BRANCH)
            full = run.app.git("log", "-1", "--format=%B", record.git_sha)
            assert full.startswith(record.commit_message + "\n\nOrchestra-Model: ")
    read = turns[0].tool_calls[0]
    assert (read.name, dict(read.args), read.error) == ("app:read-file", {"path": "README.md"}, None)
    assert "# App" in read.result
    for record, (path, content) in zip(turns[2:5], WRITES, strict=True):
        [call] = record.tool_calls
        assert (call.name, dict(call.args)) == ("app:write-file", {"path": path, "content": content})
        assert call.result and path in call.result


def test_correlation_both_ways(run: Lifecycle) -> None:
    stored = {
        record.git_sha: turn.turn_id
        for turn, record in agent_turns(run.project, "1")
        if record.git_sha and not record.by_tool_stage
    }
    for sha, turn_id in stored.items():
        # store -> git: the recorded SHA holds the files the turn wrote
        record = next(r for _, r in agent_turns(run.project, "1") if r.git_sha == sha)
        for call in record.tool_calls:
            assert run.app.show(sha, call.args["path"]) == call.args["content"]
        # git -> store, from the user's repository, outside the project directory
        shown = json.loads(orchestra("show", sha, "--json", cwd=run.app.path, env=run.env).stdout)
        assert shown["turn"]["turn_id"] == turn_id and shown["turn"]["matched"] == "sha"
        assert (shown["session"]["session_id"], shown["project"]) == ("1", str(run.project))
        assert shown["commit"]["files"] == [{"path": record.tool_calls[0].args["path"], "status": "A"}]
    worktree = run.project / ".orchestra" / "worktrees" / "1" / "app"
    text = orchestra("show", "HEAD~1", cwd=worktree, env=run.env).stdout
    assert f"turn     1  (turn id {stored[run.commits[1]]})" in text and "B = 2" in text
    # The tool stage's commit leads to its turn too: the node, its command and how it ended.
    tool = json.loads(orchestra("show", run.tool_commit, "--json", cwd=run.app.path, env=run.env).stdout)
    assert (tool["turn"]["node_id"], tool["turn"]["model"], tool["turn"]["provider"]) == ("mess", "tool_command", "tool")
    assert tool["turn"]["tool_calls"][0]["result"] == "exit code 0"


def test_the_users_checkout_is_untouched_byte_for_byte(run: Lifecycle) -> None:
    assert checkout_fingerprint(run.app) == run.before
    assert run.app.git("config", "--local", "--get-all", "orchestra.project").split() == [str(run.project)]


def test_checkpoints_record_each_repos_head(run: Lifecycle) -> None:
    heads = {
        record.current_node: record.workspace_snapshot.sha_by_repo() if record.workspace_snapshot else None
        for _, record in records_of(run.project, "1", CheckpointRecord)
    }
    tip = run.commits[-1]
    assert heads == {  # recorded only when the head moved since the last snapshot
        "": {"app": run.base},  # taken as the run starts, before any node
        "start": None,
        "plan": None,
        "mess": {"app": run.tool_commit},
        "implement": {"app": tip},
        "exit": None,
    }
    logs = Path(run.document["logs_root"])
    assert json.loads((logs / "checkpoint.json").read_text(encoding="utf-8"))["workspace_snapshot"] == {
        "app": tip
    }
