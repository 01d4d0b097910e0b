"""`orchestra run` with OTEL_EXPORTER_OTLP_ENDPOINT exports its trace over OTLP/HTTP to a receiver on loopback
that decodes it: the session, its stages (branches nested under their parallel node), the scripted model's turns
with the GenAI attributes, their tool calls and their commits (the SHAs git shows)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from orchestra_core.model.spans import Span, SpanStatus, session_trace
from tests.support.environment import hermetic_env
from tests.support.git_repos import GitRepo
from tests.support.orchestra_project import committed_files, open_store, run_json
from tests.support.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.support.traced_project import traced_project

BRANCH = "orchestra/traced/1"
SLACK = timedelta(milliseconds=20)  # wall clock read by different parts: a child may start a hair before


@frozen
class TracedRun:
    project: Path
    repo: GitRepo
    base: str
    document: dict[str, Any]
    spans: list[ReceivedSpan]

    def named(self, name: str) -> list[Span]:
        return [received.span for received in self.spans if received.name == name]

    def spans_named_prefix(self, prefix: str) -> list[Span]:
        return [received.span for received in self.spans if received.name.startswith(prefix)]

    def one(self, name: str) -> Span:
        [span] = self.named(name)
        return span

    def by_id(self) -> dict[int, Span]:
        return {received.span.context.span_id: received.span for received in self.spans}

    def parent_of(self, span: Span) -> Span:
        assert span.parent is not None, span.name
        return self.by_id()[span.parent.span_id]

    def stage(self, node: str) -> Span:
        return self.one(f"stage {node}")


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> TracedRun:
    root = tmp_path_factory.mktemp("traced")
    (root / "home").mkdir()
    env = hermetic_env(root / "home")
    project, repo = traced_project(root)
    with OtlpReceiver() as receiver:
        document = run_json("run", "traced.dot", cwd=project, env={**env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url})
        spans = receiver.spans()  # the run flushed before it exited: everything is there
        paths = {request.path for request in receiver.requests}
    assert paths == {"/v1/traces"}
    return TracedRun(project, repo, repo.head(), document, spans)


def _contains(parent: Span, child: Span) -> bool:
    return parent.start - SLACK <= child.start and child.end <= parent.end + SLACK


def test_one_trace_under_one_root_the_session(traced: TracedRun) -> None:
    session = traced.document["session_id"]
    assert {received.span.context.trace_id for received in traced.spans} == {traced.spans[0].span.context.trace_id}
    [root] = [received.span for received in traced.spans if received.span.parent is None]
    assert root.name == "run traced" and root.status is SpanStatus.OK
    assert dict(root.attributes) == {
        "orchestra.session_id": session, "orchestra.pipeline": "traced", "orchestra.run.kind": "new",
        "orchestra.session.status": "success",
    }  # fmt: skip
    with open_store(traced.project) as store:  # the trace is the session's: derived from its id and creation
        assert root.context == session_trace(session, store.get_session(session).created_at)
    assert {received.resource["service.name"] for received in traced.spans} == {"orchestra"}
    assert {received.scope for received in traced.spans} == {"orchestra"}
    ids = [received.span.context.span_id for received in traced.spans]
    assert len(ids) == len(set(ids))


def test_stages_nest_under_the_session_and_branches_under_their_parallel_node(traced: TracedRun) -> None:
    root = traced.one("run traced")
    stages = {dict(span.attributes)["orchestra.node_id"]: span for span in traced.spans_named_prefix("stage ")}
    assert set(stages) == {"start", "plan", "build", "fan", "left", "right", "join", "exit"}
    for node in ("start", "plan", "build", "fan", "join", "exit"):
        assert traced.parent_of(stages[node]) == root and _contains(root, stages[node])
    for node in ("left", "right"):
        branch = traced.parent_of(stages[node])
        assert branch.name == f"branch fan:{node}" and dict(branch.attributes)["orchestra.branch.status"] == "success"
        assert traced.parent_of(branch) == stages["fan"]
        assert _contains(branch, stages[node]) and _contains(stages["fan"], branch)
        assert dict(stages[node].attributes)["orchestra.branch"] == f"fan:{node}"
    plan = dict(stages["plan"].attributes)
    assert plan == {
        "orchestra.session_id": traced.document["session_id"], "orchestra.node_id": "plan",
        "orchestra.handler": "codergen", "orchestra.stage.index": plan["orchestra.stage.index"],
        "orchestra.stage.attempt": 1, "orchestra.stage.status": "success",
    }  # fmt: skip
    assert dict(stages["build"].attributes)["orchestra.handler"] == "tool"
    assert dict(stages["fan"].attributes)["orchestra.parallel.branch_count"] == 2
    assert all(span.status is SpanStatus.OK for span in stages.values())


def test_turns_carry_the_genai_attributes_and_their_tool_calls(traced: TracedRun) -> None:
    plan = traced.stage("plan")
    turns = sorted(
        (span for span in traced.named("chat scripted") if traced.parent_of(span) == plan),
        key=lambda span: dict(span.attributes)["orchestra.turn_number"],
    )
    assert [dict(span.attributes)["orchestra.turn_number"] for span in turns] == [0, 1]
    first = dict(turns[0].attributes)
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == first["gen_ai.system"] == "scripted"
    assert first["gen_ai.request.model"] == first["gen_ai.response.model"] == "scripted"
    assert isinstance(first["gen_ai.usage.input_tokens"], int) and first["gen_ai.usage.input_tokens"] > 0
    assert isinstance(first["gen_ai.usage.output_tokens"], int) and first["gen_ai.usage.output_tokens"] > 0
    assert (first["orchestra.session_id"], first["orchestra.node_id"]) == (traced.document["session_id"], "plan")
    assert first["orchestra.cost_usd"] == 0.0  # the scripted model is priced at nothing: a known zero, so it is there
    assert all(_contains(plan, turn) for turn in turns) and turns[0].end <= turns[1].start + SLACK
    tools = [span for span in traced.spans_named_prefix("execute_tool project:") if traced.parent_of(span) == turns[0]]
    assert sorted(span.name for span in tools) == ["execute_tool project:read-file", "execute_tool project:write-file"]
    for span in tools:
        attributes = dict(span.attributes)
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["gen_ai.tool.name"] == span.name.removeprefix("execute_tool ")
        assert attributes["gen_ai.tool.call.id"]
        assert _contains(turns[0], span)
    [failed] = [span for span in tools if span.name.endswith("read-file")]
    assert failed.status is SpanStatus.ERROR and dict(failed.attributes)["error.type"] == "tool_error"
    assert "missing.md" in failed.status_message
    [written] = [span for span in tools if span.name.endswith("write-file")]
    assert written.status is SpanStatus.UNSET
    # Each call has the times it ran: one after the other, before the agent's turn ended (its commit began).
    assert written.start < failed.start and written.end <= failed.start
    [commit] = [span for span in traced.named("commit project") if traced.parent_of(span) == turns[0]]
    assert failed.end < commit.start


def test_commits_are_spans_of_their_turns_with_the_shas_git_shows(traced: TracedRun) -> None:
    commits = traced.named("commit project")
    shown = traced.repo.log(f"{traced.base}..{BRANCH}", "%H")
    merges = traced.repo.git("log", "--merges", "--format=%H", f"{traced.base}..{BRANCH}").split()
    assert sorted(dict(span.attributes)["orchestra.commit_sha"] for span in commits) == sorted(
        set(shown) - set(merges)
    )
    by_node = Counter(dict(span.attributes)["orchestra.node_id"] for span in commits)
    assert by_node == {"plan": 1, "build": 1, "left": 1, "right": 1}
    for span in commits:
        attributes = dict(span.attributes)
        sha = attributes["orchestra.commit_sha"]
        assert isinstance(sha, str)
        assert list(attributes["orchestra.commit.files"]) == committed_files(traced.repo, sha)  # type: ignore[arg-type]
        assert attributes["orchestra.repo"] == "project"
        parent = traced.parent_of(span)
        assert _contains(parent, span)
        if attributes["orchestra.node_id"] == "build":  # a tool stage's command holds its commit
            assert parent.name == "execute_tool shell" and traced.parent_of(parent) == traced.stage("build")
            assert attributes["orchestra.git_branch"] == BRANCH
        else:
            assert parent.name == "chat scripted"
    branches = {dict(span.attributes)["orchestra.node_id"]: dict(span.attributes)["orchestra.git_branch"] for span in commits}
    assert branches["left"] == f"{BRANCH}--fan-left" and branches["plan"] == BRANCH
