"""Tool call hooks (Attractor 9.7): pre-hooks veto, post-hooks see results, both are recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestra_adapters.process.command_runner import SubprocessCommandRunner
from orchestra_core.agents.hooks import HookResult, ToolHooks
from orchestra_core.agents.tools import AgentTool, ToolFailure, is_tool_error
from orchestra_core.model.graph import Graph, Node


@pytest.fixture
def calls() -> list[dict[str, object]]:
    return []


@pytest.fixture
def tool(calls: list[dict[str, object]]) -> AgentTool:
    def write(path: str, content: str) -> str:
        calls.append({"path": path, "content": content})
        return f"wrote {path}"

    return AgentTool("app:write-file", "Write a file", write, writes_files=True)


def hooks(tmp_path: Path, **commands: str) -> ToolHooks:
    return ToolHooks(SubprocessCommandRunner(), cwd=str(tmp_path), node_id="implement", **commands)


def test_without_hooks_tools_are_unchanged(tmp_path: Path, tool: AgentTool) -> None:
    quiet = hooks(tmp_path)
    assert not quiet.active
    assert quiet.wrap([tool]) == [tool]


def test_pre_hook_success_lets_the_call_through(tmp_path: Path, tool: AgentTool, calls: list[dict[str, object]]) -> None:
    (wrapped,) = hooks(tmp_path, pre="exit 0").wrap([tool])
    assert wrapped.func(path="a.py", content="x") == "wrote a.py"
    assert calls == [{"path": "a.py", "content": "x"}]
    assert (wrapped.name, wrapped.safe_name, wrapped.writes_files) == ("app:write-file", "app__write-file", True)


def test_pre_hook_failure_vetoes_and_tells_the_model_why(tmp_path: Path, tool: AgentTool, calls: list[dict[str, object]]) -> None:
    recorded: list[HookResult] = []
    hooked = ToolHooks(
        SubprocessCommandRunner(), pre="echo 'writes are frozen' >&2; exit 1", cwd=str(tmp_path), node_id="implement", on_result=recorded.append
    )
    (wrapped,) = hooked.wrap([tool])
    result = wrapped.func(path="a.py", content="x")
    assert is_tool_error(result)
    assert result == "Error: the call to app:write-file was blocked by the tool_hooks.pre hook: writes are frozen"
    assert calls == []
    (veto,) = hooked.drain()
    assert veto.vetoed and veto.exit_code == 1 and veto.phase == "pre"
    assert veto.summary() == "tool_hooks.pre for app:write-file on node implement: exit 1 (call blocked)"
    assert recorded == [veto]
    assert hooked.drain() == []


def test_hooks_receive_metadata_in_env_and_stdin(tmp_path: Path, tool: AgentTool) -> None:
    capture = tmp_path / "capture"
    script = f'printf "%s|%s|%s|%s\\n" "$ORCHESTRA_HOOK_PHASE" "$ORCHESTRA_TOOL_NAME" "$ORCHESTRA_TOOL_SAFE_NAME" "$ORCHESTRA_NODE_ID" >> {capture}; cat >> {capture}; echo >> {capture}'
    hooked = hooks(tmp_path, pre=script, post=script)
    (wrapped,) = hooked.wrap([tool])
    wrapped.func(path="a.py", content="x")
    lines = capture.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "pre|app:write-file|app__write-file|implement"
    assert json.loads(lines[1]) == {"phase": "pre", "node_id": "implement", "tool": "app:write-file", "arguments": {"path": "a.py", "content": "x"}}
    assert lines[2] == "post|app:write-file|app__write-file|implement"
    post = json.loads(lines[3])
    assert (post["phase"], post["result"], post["is_error"]) == ("post", "wrote a.py", False)
    assert [result.phase for result in hooked.drain()] == ["pre", "post"]


def test_post_hook_failure_is_recorded_but_does_not_change_the_result(tmp_path: Path, tool: AgentTool) -> None:
    hooked = hooks(tmp_path, post="echo audit-down; exit 7")
    (wrapped,) = hooked.wrap([tool])
    assert wrapped.func(path="a.py", content="x") == "wrote a.py"
    (post,) = hooked.drain()
    assert (post.phase, post.exit_code, post.ok, post.vetoed, post.reason()) == ("post", 7, False, False, "audit-down")


def test_post_hook_sees_tool_errors(tmp_path: Path) -> None:
    failing = AgentTool("app:read-file", "", lambda **_: ToolFailure.of("no such file: x"))
    capture = tmp_path / "post.json"
    (wrapped,) = hooks(tmp_path, post=f"cat > {capture}").wrap([failing])
    assert is_tool_error(wrapped.func(path="x"))
    assert json.loads(capture.read_text(encoding="utf-8"))["is_error"] is True


def test_hook_that_cannot_start_vetoes(tool: AgentTool, tmp_path: Path) -> None:
    hooked = ToolHooks(SubprocessCommandRunner(), pre="true", cwd=str(tmp_path / "missing-dir"), node_id="n")
    (wrapped,) = hooked.wrap([tool])
    assert is_tool_error(wrapped.func(path="a", content=""))
    assert hooked.drain()[0].vetoed


def test_hook_timeout_vetoes(tool: AgentTool, tmp_path: Path, calls: list[dict[str, object]]) -> None:
    hooked = ToolHooks(SubprocessCommandRunner(), pre="sleep 5", cwd=str(tmp_path), node_id="n", timeout=0.2)
    (wrapped,) = hooked.wrap([tool])
    assert is_tool_error(wrapped.func(path="a", content=""))
    assert calls == []
    assert hooked.drain()[0].timed_out


def test_node_attributes_override_graph_attributes(tmp_path: Path) -> None:
    graph = Graph("g", {"tool_hooks.pre": "graph-pre", "tool_hooks.post": "graph-post"})
    node_hooks = ToolHooks.for_node(Node("n", {"tool_hooks.pre": "node-pre"}), graph, SubprocessCommandRunner(), cwd=str(tmp_path))
    assert (node_hooks.pre, node_hooks.post) == ("node-pre", "graph-post")
    plain = ToolHooks.for_node(Node("m"), Graph("g"), SubprocessCommandRunner(), cwd=str(tmp_path))
    assert not plain.active


def test_agent_hooks_get_the_variables_tool_node_hooks_get(tmp_path: Path, tool: AgentTool) -> None:
    capture = tmp_path / "capture"
    script = f'echo "$TOOL_NAME|$NODE_ID|$EXIT_CODE|$ATTRACTOR_STAGE_DIR|$ATTRACTOR_LOGS_ROOT|$ATTRACTOR_NODE_ID" >> {capture}'
    failing = AgentTool("app:read-file", "", lambda **_: ToolFailure.of("no such file: x"))
    hooked = ToolHooks(
        SubprocessCommandRunner(), pre=script, post=script, cwd=str(tmp_path), node_id="implement",
        stage_dir="/logs/implement", logs_root="/logs",
    )
    for wrapped in hooked.wrap([tool, failing]):
        wrapped.func(path="a.py", content="x")
    assert capture.read_text(encoding="utf-8").splitlines() == [
        "app:write-file|implement||/logs/implement|/logs|implement",
        "app:write-file|implement|0|/logs/implement|/logs|implement",
        "app:read-file|implement||/logs/implement|/logs|implement",
        "app:read-file|implement|1|/logs/implement|/logs|implement",
    ]
