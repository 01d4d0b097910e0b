"""Benchmark what a CLI agent node adds to an agent's time; prints one JSON object.

Measures, in the same run, on a generated 20,000-file repository:
- the MCP proxy's start-up (`python -P -m orchestra_adapters.mcp --connect`, bytecode cached): process start
  to the first `tools/list` answer, as the agent waits for it before its first model request;
- one tool call (`project:read-file` of a small file) through the proxy and the tool host, against the same
  call made in-process (the LangGraph backend's path);
- the untracked-writes sweep: the worktree baseline taken when the agent starts, and one `changed()` check
  with one stray file, as done after a turn that used a native tool and at the agent's exit.
Targets (issue 12): each figure small next to an LLM call (seconds): proxy start < 1 s, a call's overhead
< 10 ms, a sweep < 150 ms on 20,000 files.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from large_repo import ENV, FILES, generate_repo
from mcp import Client, StdioServerParameters

from orchestra_adapters.git import SubprocessGit
from orchestra_adapters.mcp.tool_host import ToolHost
from orchestra_adapters.tools.toolbox import Toolbox
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from orchestra_core.agents.toolset import build_tools, create_registry
from orchestra_core.model.settings import OrchestraSettings
from orchestra_core.workspace.worktree_watch import WorktreeWatch

# The proxy starts as on a user's machine: with its bytecode cached.
PROXY_ENV = {key: value for key, value in ENV.items() if key != "PYTHONDONTWRITEBYTECODE"}
STARTS = 5
CALLS = 50
SWEEPS = 7




def toolbox(repo: Path) -> Toolbox:
    registry = create_registry(OrchestraSettings())
    repos = {"project": RepoContext("project", repo)}
    return Toolbox(build_tools(registry, registry.names(["project"]), repos, WriteTracker()))


def ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 2)


async def proxy_figures(host: ToolHost) -> tuple[list[float], list[float]]:
    spec = host.server_spec()
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env={**PROXY_ENV, **spec.env})
    starts: list[float] = []
    calls: list[float] = []
    for attempt in range(STARTS):
        began = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            starts.append(time.perf_counter() - began)
            if attempt == 0:
                for _ in range(CALLS):
                    began = time.perf_counter()
                    result = await client.call_tool("project__read-file", {"path": "pkg00/mod00/file0.py"})
                    calls.append(time.perf_counter() - began)
                    assert not result.is_error
    return starts, calls


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="orchestra-bench-mcp-") as temp:
        repo = generate_repo(Path(temp))
        box = toolbox(repo)
        direct = []
        for number in range(CALLS):
            began = time.perf_counter()
            executed = box.execute("project__read-file", {"path": "pkg00/mod00/file0.py"}, f"c{number}")
            direct.append(time.perf_counter() - began)
            assert not executed.failed
        with ToolHost(box) as host:
            starts, calls = anyio.run(proxy_figures, host)

        git_port = SubprocessGit()
        baselines, checks = [], []
        for number in range(SWEEPS):
            began = time.perf_counter()
            watch = WorktreeWatch(git_port, {"project": repo})
            baselines.append(time.perf_counter() - began)
            (repo / f"stray{number}.txt").write_text("stray\n")
            began = time.perf_counter()
            changed = watch.changed()
            checks.append(time.perf_counter() - began)
            assert changed == [f"project:stray{number}.txt"], changed
            (repo / f"stray{number}.txt").unlink()

    print(
        json.dumps(
            {
                "files": FILES,
                "proxy_start_to_tools_ms": ms(starts),
                "tool_call_via_mcp_ms": ms(calls),
                "tool_call_in_process_ms": ms(direct),
                "mcp_overhead_per_call_ms": round(ms(calls) - ms(direct), 2),
                "sweep_baseline_ms": ms(baselines),
                "sweep_check_ms": ms(checks),
                "targets": {"proxy_start_ms": 1000, "overhead_per_call_ms": 10, "sweep_ms": 150},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
