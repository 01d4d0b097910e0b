"""`sandbox: {kind: bubblewrap}` through `orchestra run`, with real bubblewrap: tool nodes write their worktree
and the extra `writable` paths, nothing else (their `.git` included); a write elsewhere fails the node and the
run records it; the network is off unless `network: true`."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.git_repos import make_repo
from tests.support.orchestra_project import agent_turns, orchestra, write_files
from tests.support.sandbox import needs_bwrap

pytestmark = [pytest.mark.slow, needs_bwrap()]

PROBE = """probe() { if sh -c "$2" 2>/dev/null; then echo "$1:ok"; else echo "$1:refused"; fi; }
probe worktree 'echo x > made.txt'
probe home 'echo x > "$HOME/orchestra-sandbox-probe"'
probe etc 'touch /etc/orchestra-sandbox-probe'
touch "$PROJECT/outside.txt" 2>/dev/null  # under /tmp here: lands in the private /tmp, never on the host
probe extra "touch '$EXTRA/written.txt'"
probe tmp 'echo x > /tmp/scratch && test -s /tmp/scratch'
probe stage 'echo "{\\"outcome\\": \\"success\\", \\"notes\\": \\"written inside\\"}" > "$ORCHESTRA_STAGE_DIR/status.json"'
probe dotgit 'echo x >> .git'
probe gitdir 'echo x >> "$(git rev-parse --git-dir)/config"'
probe commondir 'echo x >> "$(git rev-parse --git-common-dir)/config"'
probe git-reads 'git rev-parse HEAD && git log --oneline -1'
"""


def run(root: Path, pipeline: str, *, expect: int) -> dict[str, Any]:
    result = orchestra("run", pipeline, "--json", "--quiet", "--logs-root", str(root / "logs"), cwd=root)
    assert result.returncode == expect, result.stderr + result.stdout
    return json.loads(result.stdout)


def failure(root: Path, node: str) -> str:
    """The failure reason the run recorded in the node's status.json."""
    return str(
        json.loads((root / "logs" / node / "status.json").read_text(encoding="utf-8"))["failure_reason"]
    )


def config(*, isolation: str = "worktree", network: bool = False, writable: str = "[]") -> str:
    return (
        f"workspace:\n  repos:\n    project: {{path: ., isolation: {isolation}}}\n"
        f"sandbox:\n  kind: bubblewrap\n  network: {str(network).lower()}\n  writable: {writable}\n"
    )


def tool_pipeline(name: str, *commands: str) -> str:
    nodes = [f'    n{i} [shape=parallelogram, tool_command="{c}"]' for i, c in enumerate(commands)]
    chain = " -> ".join(["start", *(f"n{i}" for i in range(len(commands))), "done"])
    return "\n".join(
        [
            f"digraph {name} {{",
            "    start [shape=Mdiamond]; done [shape=Msquare]",
            *nodes,
            f"    {chain}",
            "}",
        ]
    )


def test_a_write_outside_the_worktree_fails_the_node_and_the_run_records_it(tmp_path: Path) -> None:
    pipeline = tool_pipeline(
        "escape", "echo made > made.txt && cat made.txt", "touch /etc/orchestra-sandbox-probe"
    )
    repo = make_repo(tmp_path / "project", {"orchestra.yaml": config(), "escape.dot": pipeline})
    document = run(repo.path, "escape.dot", expect=1)
    assert document["status"] == "fail" and document["node_outcomes"] == {
        "start": "success", "n0": "success", "n1": "fail",
    }  # fmt: skip
    stage = repo.path / "logs" / "n1"
    assert "Read-only file system" in (stage / "tool_output.txt").read_text(encoding="utf-8")
    status = json.loads((stage / "status.json").read_text(encoding="utf-8"))
    assert status["outcome"] == "fail" and "Read-only file system" in status["failure_reason"]
    assert not Path("/etc/orchestra-sandbox-probe").exists()
    [made] = (repo.path / ".orchestra" / "worktrees").glob("*/project/made.txt")
    assert made.read_text(encoding="utf-8") == "made\n" and not (repo.path / "made.txt").exists()


def test_only_the_worktree_the_stage_directory_and_the_extra_paths_are_writable(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    files = {
        "orchestra.yaml": config(writable=f"[{extra}]"),
        "probe.sh": PROBE,
        "probe.dot": tool_pipeline("probe", f"PROJECT={tmp_path / 'project'} EXTRA={extra} sh probe.sh"),
    }
    repo = make_repo(tmp_path / "project", files)
    document = run(repo.path, "probe.dot", expect=0)
    output = (repo.path / "logs" / "n0" / "tool_output.txt").read_text(encoding="utf-8")
    assert [line for line in output.splitlines() if ":" in line and not line.startswith(("$", "#"))] == [
        "worktree:ok", "home:refused", "etc:refused", "extra:ok", "tmp:ok", "stage:ok",
        "dotgit:refused", "gitdir:refused", "commondir:refused", "git-reads:ok",
    ]  # fmt: skip
    assert document["node_outcomes"]["n0"] == "success"
    assert json.loads((repo.path / "logs" / "n0" / "status.json").read_text())["notes"] == "written inside"
    assert (extra / "written.txt").exists() and not (repo.path / "outside.txt").exists()
    assert not (Path.home() / "orchestra-sandbox-probe").exists() and not Path("/tmp/scratch").exists()
    assert "x" not in (repo.path / ".git" / "config").read_text(encoding="utf-8").splitlines()


def test_in_place_the_checkout_is_writable_and_its_git_directory_is_not(tmp_path: Path) -> None:
    pipeline = tool_pipeline("inplace", "echo changed > README.md", "echo x >> .git/config")
    repo = make_repo(
        tmp_path / "project", {"orchestra.yaml": config(isolation="in_place"), "inplace.dot": pipeline}
    )
    document = run(repo.path, "inplace.dot", expect=1)
    assert (document["node_outcomes"]["n0"], document["node_outcomes"]["n1"]) == ("success", "fail")
    assert "Read-only file system" in failure(repo.path, "n1")
    assert (repo.path / "README.md").read_text(encoding="utf-8") == "changed\n"
    assert "x" not in (repo.path / ".git" / "config").read_text(encoding="utf-8").splitlines()


@pytest.fixture
def loopback_port() -> Iterator[int]:
    """A TCP server on the host's loopback that accepts connections; its port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    server.close()


@pytest.mark.parametrize("network", [False, True])
def test_the_network_is_off_unless_allowed(tmp_path: Path, loopback_port: int, network: bool) -> None:
    connect = f"import socket\nsocket.create_connection(('127.0.0.1', {loopback_port}), timeout=5).close()\n"
    sandbox = f"sandbox:\n  kind: bubblewrap\n  network: {str(network).lower()}\n"
    files = {
        "orchestra.yaml": sandbox,
        "connect.py": connect,
        "net.dot": tool_pipeline("net", f"{os.path.realpath(sys.executable)} connect.py"),  # /tmp is private inside
    }
    write_files(tmp_path / "project", files)
    document = run(tmp_path / "project", "net.dot", expect=0 if network else 1)
    assert document["node_outcomes"]["n0"] == ("success" if network else "fail")
    if not network:
        reason = failure(tmp_path / "project", "n0")
        assert "Connection refused" in reason or "unreachable" in reason, reason


PROJECT_TOOL_PROBE = (
    "probe() { if sh -c \"$2\" 2>/dev/null; then echo \"$1:ok\"; else echo \"$1:refused\"; fi; }; "
    "probe repo 'echo x > made-by-tool.txt'; probe state 'echo x > app/.orchestra/orchestra.db'; "
    "probe logs 'echo x > app/logs/checkpoint.json'; probe home 'touch \"$HOME/orchestra-sandbox-probe\"'; "
    "probe gitdir 'echo x >> .git/config'"
)
STATE_PIPELINE = """digraph inside {
    start [shape=Mdiamond]; exit [shape=Msquare]
    tool [shape=parallelogram, tool_command="touch app/.orchestra/planted; touch app/logs/planted; true"]
    work [prompt="Probe", agent.tools="project:probe"]
    start -> tool -> work -> exit
}
"""


def test_project_tools_and_tool_nodes_of_a_project_inside_its_repository_cannot_write_its_state(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    config = (
        "providers: {default: scripted, scripted: {cassette: cassette.yaml}}\nbackend: langgraph\n"
        "workspace:\n  repos:\n    project: {path: .., isolation: in_place}\n"
        f"  tools:\n    project:\n      probe: {{command: {json.dumps(PROJECT_TOOL_PROBE)}}}\n"
        "sandbox:\n  kind: bubblewrap\n"
    )
    cassette = {"nodes": {"work": [{"content": "probe", "tool_calls": [{"name": "project:probe", "args": {}}]},
                                   {"content": "done"}]}}  # fmt: skip
    files = {
        "app/orchestra.yaml": config, "app/inside.dot": STATE_PIPELINE, "app/cassette.yaml": json.dumps(cassette),
        "app/.gitignore": ".orchestra/\nlogs/\n", "README.md": "hi\n",
    }  # fmt: skip
    make_repo(repo, files)
    app = repo / "app"
    result = orchestra("run", "inside.dot", "--json", "--logs-root", "logs", cwd=app)
    assert result.returncode == 0, result.stderr + result.stdout
    assert (app / "logs" / "tool" / "tool_output.txt").read_text(encoding="utf-8").count("Read-only file system") == 2
    assert not (app / ".orchestra" / "planted").exists() and not (app / "logs" / "planted").exists()
    assert json.loads(orchestra("status", "1", "--json", cwd=app).stdout)["status"] == "success"
    assert (repo / "made-by-tool.txt").exists()
    [(_stored, turn)] = [item for item in agent_turns(app, "1") if item[1].tool_calls]
    lines = [line for line in str(turn.tool_calls[0].result).splitlines() if line.endswith(("ok", "refused"))]
    assert lines == ["repo:ok", "state:refused", "logs:refused", "home:refused", "gitdir:refused"]
