"""The adversarial PR review (examples/pr-review) end to end, offline, as a user runs it: `setup.sh DIR`, then
`orchestra run pipeline.dot --answers answers.yaml` with the scripted models of its cassette. Both reviewers
run in parallel with their tools, the critic sends round one back and lets round two through, the
synthesizer writes REVIEW.md with the tech lead's scripted replies. Then what a user checks: the store, the
commits, `show`, `checkout`, `status`, a resume after a crash at the critic's checkpoint, a replay from a
synthesizer turn, and the same run on the CXDB store (the protocol-faithful stand-in server)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model.records import (
    HumanInteraction,
    InteractionMode,
    NodeEvent,
    NodeExecution,
    PipelineLifecycle,
)
from orchestra_core.model.turn import AgentTurn
from orchestra_core.session.api import latest_checkpoint
from orchestra_core.session.codec import decode_record
from tests.support.cxdb_server import FakeCxdbServer
from tests.support.environment import hermetic_env
from tests.support.orchestra_project import ORCHESTRA
from tests.support.pr_review import EXAMPLE, PR_BRANCH, REPOS, ReviewProject
from tests.support.processes import wait_until

pytestmark = pytest.mark.slow

BRANCH = "orchestra/pr_review/1"
NODES = [
    "start", "pr_diff", "security_reviewer", "architecture_reviewer", "fan_out", "fan_in", "critic",
    "security_reviewer", "architecture_reviewer", "fan_out", "fan_in", "critic", "synthesizer", "exit",
]
# The node executions in the order they started (`orchestra status`): a fan-out starts before its branches,
# which start in either order.
TIMELINE = [
    "start", "pr_diff", "fan_out", "reviewer", "reviewer", "fan_in", "critic",
    "fan_out", "reviewer", "reviewer", "fan_in", "critic", "synthesizer", "exit",
]
ANSWERS = [
    "Lead with the SQL injection and give each finding its CWE id. The XSS blocks the merge too.",
    "/approve",
]


@frozen
class Reviewed:
    project: ReviewProject
    result: dict[str, Any]
    before: dict[str, str]  # each repo's checkout (branch, HEAD, status) before the run


def _checkouts(project: ReviewProject) -> dict[str, str]:
    return {
        repo: project.git(repo, "rev-parse", "--abbrev-ref", "HEAD") + project.git(repo, "rev-parse", "HEAD")
        + project.git(repo, "status", "--porcelain", "--untracked-files=all")
        for repo in REPOS
    }


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    env = hermetic_env(tmp_path_factory.mktemp("home"))
    project = ReviewProject.create(tmp_path_factory.mktemp("review") / "pr-review", env)
    before = _checkouts(project)
    result = project.json("run", "pipeline.dot", "--answers", "answers.yaml")
    return Reviewed(project, result, before)


def _review_versions(project: ReviewProject, branch: str = BRANCH) -> list[str]:
    """REVIEW.md as each commit of the session branch left it, oldest first."""
    shas = project.git("backend", "log", "--reverse", "--format=%H", f"{PR_BRANCH}..{branch}", "--", "REVIEW.md")
    return [project.git("backend", "show", f"{sha}:REVIEW.md") for sha in shas.split()]


def _cassette_reviews() -> list[str]:
    """The two versions of REVIEW.md the synthesizer writes in the cassette."""
    from orchestra_adapters.llm.cassette import load_cassette

    replies = load_cassette(EXAMPLE / "cassette.yaml").nodes["synthesizer"]
    return [call.args["content"] for reply in replies for call in reply.tool_calls]


# The run -------------------------------------------------------------------------------------------------
def test_the_review_runs_offline_to_success_and_leaves_the_checkouts_alone(reviewed: Reviewed) -> None:
    result, project = reviewed.result, reviewed.project
    assert result["status"] == "success" and result["failure_reason"] is None
    assert result["completed_nodes"] == NODES
    assert set(result["node_outcomes"].values()) == {"success"}
    assert result["repos"]["backend"]["branch"] == BRANCH
    first, revised = _cassette_reviews()
    assert _review_versions(project) == [first, revised]  # the draft, then the version the tech lead asked for
    assert "(CWE-89)" in revised and "(CWE-89)" not in first
    assert _checkouts(project) == reviewed.before  # still on the pull request's branch, untouched
    assert not (project.root / "backend" / "REVIEW.md").exists()


def test_both_reviewers_run_in_parallel_and_use_their_tools(reviewed: Reviewed) -> None:
    project = reviewed.project
    status = project.json("status", "1")
    rounds = [
        {node["id"]: node for node in status["nodes"] if node["branch"] and node["started_at"] >= start["started_at"]
         and node["ended_at"] <= end["started_at"]}
        for start, end in _rounds(status)
    ]
    assert [sorted(nodes) for nodes in rounds] == [["architecture_reviewer", "security_reviewer"]] * 2
    for nodes in rounds:  # in each round, each reviewer started before the other one finished
        security, architecture = nodes["security_reviewer"], nodes["architecture_reviewer"]
        assert security["started_at"] < architecture["ended_at"] and architecture["started_at"] < security["ended_at"]
        assert security["session_id"] != architecture["session_id"] != "1"  # each in its own forked session
    turns = [turn for turn in status["turns"] if turn["type"] == "dev.orchestra.AgentTurn" and turn["branch"]]
    tools = {node: {tool for turn in turns if turn["node_id"] == node for tool in turn["tools"]}
             for node in ("security_reviewer", "architecture_reviewer")}
    assert tools["security_reviewer"] >= {
        "backend:read-file", "backend:search-code", "backend:run-tests", "frontend:read-file", "frontend:search-code"
    }
    assert tools["architecture_reviewer"] >= {"backend:read-file", "backend:search-code", "frontend:read-file"}
    tested = next(turn for turn in turns if "backend:run-tests" in turn["tools"])
    with project.store() as store:
        record = decode_record(store.get_turn(tested["session_id"], tested["turn_id"]))
    (call,) = record.tool_calls
    assert call.error is None and "Ran 5 tests" in call.result and "OK" in call.result  # the PR's tests really ran


def _timeline(status: dict[str, Any]) -> list[str]:
    """The node executions in `orchestra status` order, each reviewer as `reviewer` (branches start in any order)."""
    return ["reviewer" if node["id"].endswith("_reviewer") else node["id"] for node in status["nodes"]]


def _rounds(status: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each review round as (its fan_out node execution, the fan_in after it)."""
    fan_outs = [node for node in status["nodes"] if node["id"] == "fan_out"]
    fan_ins = [node for node in status["nodes"] if node["id"] == "fan_in"]
    return list(zip(fan_outs, fan_ins, strict=True))


def test_the_critic_sends_round_one_back_and_lets_round_two_through(reviewed: Reviewed) -> None:
    project = reviewed.project
    verdicts = [
        record.outcome
        for _, record in project.records_of("1", NodeExecution)
        if record.node_id == "critic" and record.event is NodeEvent.COMPLETED
    ]
    assert [(o.status.value, o.preferred_label) for o in verdicts] == [("success", "Retry"), ("success", "Proceed")]
    assert "frontend:src/customerSearch.js:17" in verdicts[0].context_updates["critique"]
    # Round two's reviewers were given the critique (their stage directories hold the latest prompts).
    prompts = [(project.root / ".orchestra" / "runs" / "1" / node / "prompt.md").read_text() for node in
               ("security_reviewer", "architecture_reviewer")]
    assert all("A critic challenged the previous round" in prompt for prompt in prompts)
    assert all("frontend:src/customerSearch.js:17" in prompt for prompt in prompts)


def test_the_synthesizer_converses_with_the_tech_lead(reviewed: Reviewed) -> None:
    project = reviewed.project
    chat = [record for _, record in project.records_of("1", HumanInteraction)]
    assert all(record.mode is InteractionMode.INTERACTIVE and record.node_id == "synthesizer" for record in chat)
    assert [record.answer for record in chat] == ANSWERS
    assert chat[0].question.startswith("REVIEW.md is on the session branch: request changes")
    turns = [turn for _, turn in project.records_of("1", AgentTurn) if turn.node_id == "synthesizer"]
    assert [turn.turn_number for turn in turns] == [0, 1, 2, 3]
    assert [bool(turn.commits) for turn in turns] == [True, False, True, False]


def test_the_store_holds_every_node_agent_turn_and_human_turn(reviewed: Reviewed) -> None:
    project = reviewed.project
    records = [record for _, record in project.records("1")]
    lifecycle = [record.event.value for record in records if isinstance(record, PipelineLifecycle)]
    assert lifecycle == ["started", "completed"]
    main_nodes = [r.node_id for r in records if isinstance(r, NodeExecution) and r.event is NodeEvent.COMPLETED]
    assert sorted(main_nodes) == sorted(node for node in NODES if not node.endswith("_reviewer"))
    status = project.json("status", "1")
    ended = [turn["node_id"] for turn in status["turns"]
             if turn["type"] == "dev.orchestra.NodeExecution" and turn["event"] == "completed"]
    assert sorted(ended) == sorted(NODES)  # the reviewers' in their branch sessions
    agent_turns = [turn for turn in status["turns"] if turn["type"] == "dev.orchestra.AgentTurn"]
    by_node = {node: sum(t["node_id"] == node for t in agent_turns) for node in {t["node_id"] for t in agent_turns}}
    assert by_node == {"security_reviewer": 5, "architecture_reviewer": 4, "critic": 3, "synthesizer": 4}
    assert [r.node_id for r in records if isinstance(r, AgentTurn)] == ["critic"] * 3 + ["synthesizer"] * 4
    assert sum(isinstance(r, HumanInteraction) for r in records) == 2


def test_review_commits_name_the_synthesizer_and_carry_the_trailers(reviewed: Reviewed) -> None:
    project = reviewed.project
    log = project.git("backend", "log", "--format=%H%x1f%an <%ae>%x1f%(trailers:only,unfold)%x1e", f"{PR_BRANCH}..{BRANCH}")
    commits = [entry.strip("\n").split("\x1f") for entry in log.split("\x1e") if entry.strip()]
    assert len(commits) == 2
    turns = [turn for _, turn in project.records_of("1", AgentTurn) if turn.commits]
    for (sha, author, trailer_text), turn in zip(reversed(commits), turns, strict=True):
        trailers = dict(line.split(": ", 1) for line in trailer_text.splitlines() if line)
        assert author == "synthesizer (scripted) <orchestra@local>"
        assert trailers == {
            "Orchestra-Model": "scripted", "Orchestra-Provider": "scripted", "Orchestra-Node": "synthesizer",
            "Orchestra-Pipeline": "pr_review", "Orchestra-Session": "1", "Orchestra-Turn": str(turn.turn_number),
        }
        assert turn.commits[0].sha == sha and turn.git_sha == sha
    assert project.git("frontend", "rev-parse", BRANCH) == project.git("frontend", "rev-parse", PR_BRANCH)


# Both directions of the trace ----------------------------------------------------------------------------
def test_show_traces_the_review_commit_to_the_synthesizer_turn(reviewed: Reviewed) -> None:
    project = reviewed.project
    sha = project.git("backend", "log", "-1", "--format=%H", BRANCH, "--", "REVIEW.md").strip()
    turn_id = next(t.turn_id for t, r in project.records_of("1", AgentTurn) if r.git_sha == sha)
    shown = project.json("show", sha, cwd=project.root / "backend")
    assert shown["session"]["session_id"] == "1" and shown["session"]["pipeline"] == "pr_review"
    assert (shown["turn"]["turn_id"], shown["turn"]["node_id"], shown["turn"]["turn_number"]) == (
        turn_id, "synthesizer", 2
    )
    assert shown["turn"]["messages"][0] == {"role": "user", "content": ANSWERS[0]}
    text = project.cli("show", sha, cwd=project.root / "backend").stdout
    assert "node     synthesizer" in text and f"turn     2  (turn id {turn_id})" in text
    assert f"orchestra checkout 1 --turn {turn_id}" in text and f"orchestra replay 1 --turn {turn_id}" in text
    assert f"user: {ANSWERS[0]}" in text


def test_checkout_puts_a_turns_code_in_detached_worktrees_with_its_reasoning(reviewed: Reviewed) -> None:
    project = reviewed.project
    draft_turn, draft = next((t, r) for t, r in project.records_of("1", AgentTurn) if r.node_id == "synthesizer")
    document = project.json("checkout", "1", "--turn", draft_turn.turn_id)
    worktrees = {repo: Path(path) for repo, path in document["worktrees"].items()}
    assert set(worktrees) == set(REPOS)
    assert worktrees["backend"] == project.root / ".orchestra" / "checkouts" / "1" / f"turn-{draft_turn.turn_id}" / "backend"
    assert (worktrees["backend"] / "REVIEW.md").read_text() == _cassette_reviews()[0]  # the draft, not the revision
    head = subprocess.run(["git", "-C", str(worktrees["backend"]), "symbolic-ref", "-q", "HEAD"], check=False)
    assert head.returncode == 1  # detached
    assert document["commits"]["backend"] == {"sha": draft.git_sha, "source": "turn"}
    assert document["commits"]["frontend"]["source"] == "checkpoint"
    assert document["turn"]["node_id"] == "synthesizer" and document["turn"]["tool_calls"][0]["name"] == "backend:write-file"
    # A reviewer's turn lives in a parallel branch's session; the run's id finds it, and its code is the PR's.
    status = project.json("status", "1")
    reviewer = next(t for t in status["turns"] if t["type"] == "dev.orchestra.AgentTurn" and t["branch"])
    text = project.cli("checkout", "1", "--turn", reviewer["turn_id"], "--repo", "backend")
    assert text.returncode == 0, text.stderr
    assert f"{reviewer['node_id']} #0" in text.stdout
    assert f"parallel branch's session {reviewer['session_id']}" in text.stdout
    with project.store() as store:
        record = decode_record(store.get_turn(reviewer["session_id"], reviewer["turn_id"]))
    said = next(message["content"] for message in record.messages if message["role"] == "assistant")
    assert f"assistant: {said}" in text.stdout  # its reasoning
    tree = project.root / ".orchestra" / "checkouts" / "1" / f"turn-{reviewer['turn_id']}"
    assert [p.name for p in tree.iterdir()] == ["backend"] and not (tree / "backend" / "REVIEW.md").exists()
    assert _checkouts(project) == reviewed.before


def test_status_totals_tokens_and_time_per_node(reviewed: Reviewed) -> None:
    project = reviewed.project
    status = project.json("status", "1")
    assert status["status"] == "success"
    assert _timeline(status) == TIMELINE
    assert all(node["status"] == "success" and node["duration_s"] is not None for node in status["nodes"])
    agent_turns = [turn for turn in status["turns"] if turn["type"] == "dev.orchestra.AgentTurn"]
    assert len(agent_turns) == 16
    total = status["tokens"]
    assert total["prompt_tokens"] == sum(turn["tokens"]["prompt_tokens"] for turn in agent_turns) > 0
    assert total["completion_tokens"] == sum(turn["tokens"]["completion_tokens"] for turn in agent_turns) > 0
    per_node = sum(node["tokens"]["prompt_tokens"] for node in status["nodes"] if node.get("tokens"))
    assert per_node == total["prompt_tokens"]
    text = project.cli("status", "1").stdout
    assert "16 agent turns" in text and f"{total['prompt_tokens']:,}+{total['completion_tokens']:,} tokens" in text


# Replay, resume, CXDB ------------------------------------------------------------------------------------
def test_replay_from_a_synthesizer_turn_reaches_success_again(reviewed: Reviewed) -> None:
    project = reviewed.project
    draft_reply = [t for t, r in project.records_of("1", AgentTurn) if r.node_id == "synthesizer"][1]
    replayed = project.json("replay", "1", "--turn", draft_reply.turn_id, "--answers", "answers.yaml")
    fork = replayed["session_id"]
    assert replayed["status"] == "success" and fork != "1"
    assert replayed["completed_nodes"] == NODES
    branch = replayed["repos"]["backend"]["branch"]
    # The fork starts at the draft's commit and goes on in the conversation: the same revision, committed anew.
    assert _review_versions(project, branch) == _cassette_reviews()
    assert [r.answer for _, r in project.records_of(fork, HumanInteraction)] == ANSWERS
    with project.store() as store:
        info = store.get_session(fork)
        assert (info.metadata.parent_session_id, info.metadata.spawn_reason) == ("1", "replay")
        assert store.get_session("1").status.value == "success"


def test_resume_after_a_crash_goes_on_from_the_critics_checkpoint(tmp_path: Path) -> None:
    env = {**os.environ}
    project = ReviewProject.create(tmp_path / "pr-review", env)
    runner = subprocess.Popen(  # no --answers: the synthesizer's reply waits for the terminal
        [str(ORCHESTRA), "run", "pipeline.dot", "--quiet"], cwd=project.root, env={**env, "NO_COLOR": "1"},
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        waiting = project.root / ".orchestra" / "attach" / "1" / "waiting.json"
        assert wait_until(lambda: waiting.exists() or runner.poll() is not None, 120)
        assert runner.poll() is None
        os.kill(runner.pid, signal.SIGKILL)
        assert runner.wait(10) == -signal.SIGKILL
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait(10)
    with project.store() as store:
        found = latest_checkpoint(store, "1")
        assert found is not None
        assert (found.checkpoint.current_node, found.checkpoint.next_node) == ("critic", "synthesizer")
    assert project.json("status")["sessions"][0]["status"] == "interrupted"
    resumed = project.json("resume", "1", "--answers", "answers.yaml")
    assert resumed["status"] == "success" and resumed["completed_nodes"] == NODES
    lifecycle = [record.event.value for _, record in project.records_of("1", PipelineLifecycle)]
    assert lifecycle == ["started", "resumed", "completed"]
    # The conversation went on where it was: the reply that waited, then the tech lead's two messages.
    assert [record.answer for _, record in project.records_of("1", HumanInteraction)] == ANSWERS
    assert project.git("backend", "show", f"{BRANCH}:REVIEW.md") == _cassette_reviews()[1]
    critic_runs = [r for _, r in project.records_of("1", NodeExecution)
                   if r.node_id == "critic" and r.event is NodeEvent.STARTED]
    assert len(critic_runs) == 2  # nothing before the checkpoint ran again


def test_the_same_review_on_the_cxdb_store(tmp_path: Path) -> None:
    with FakeCxdbServer() as cxdb:
        storage = {"backend": "cxdb", "addr": cxdb.addr, "url": cxdb.url}
        project = ReviewProject.create(tmp_path / "pr-review", {**os.environ}, storage)
        result = project.json("run", "pipeline.dot", "--answers", "answers.yaml")
        assert not (project.root / ".orchestra" / "orchestra.db").exists()  # nothing went to SQLite
        session = result["session_id"]
        assert result["status"] == "success" and result["completed_nodes"] == NODES
        status = project.json("status", session)
        assert _timeline(status) == TIMELINE
        assert sum(turn["type"] == "dev.orchestra.AgentTurn" for turn in status["turns"]) == 16
        assert [r.answer for _, r in project.records_of(session, HumanInteraction)] == ANSWERS
        branch = result["repos"]["backend"]["branch"]
        sha = project.git("backend", "log", "-1", "--format=%H", branch, "--", "REVIEW.md").strip()
        shown = project.json("show", sha, cwd=project.root / "backend")
        assert shown["turn"]["node_id"] == "synthesizer" and cxdb.addr in shown["store"]
        checkout = project.json("checkout", session, "--turn", shown["turn"]["turn_id"], "--repo", "backend")
        assert (Path(checkout["worktrees"]["backend"]) / "REVIEW.md").read_text() == _cassette_reviews()[1]
        assert _review_versions(project, branch) == _cassette_reviews()
