"""What a run offers a backend it builds: its repos (the session worktrees) and a watch over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orchestra_core as oc
from orchestra_adapters.git.subprocess_git import SubprocessGit
from orchestra_core.model.settings import OrchestraSettings, RepoSettings, WorkspaceSettings
from orchestra_core.model.turn import AgentTurn
from orchestra_core.model.workspace_events import UntrackedWritesCommitted
from orchestra_core.runs.ports import AgentRuntime
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.git_repos import git, make_repo

PIPELINE = """
digraph native {
    start [shape=Mdiamond]; done [shape=Msquare]
    work [prompt="Write out.txt with your own tools"]
    start -> work -> done
}
"""


class _NativeWriter:
    """A backend whose agent writes with its own tools: the safety net finds the file and commits it apart."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.seen: dict[str, Any] = {}

    def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> str:
        repos = self.runtime.repos()
        watch = self.runtime.watch_worktrees()
        assert watch is not None
        self.seen["repos"] = dict(repos)
        root = repos["app"].root
        (root / "out.txt").write_text("written behind Orchestra's back\n")
        changed = watch.changed()
        self.seen["changed"] = changed
        on_turn(
            AgentTurn(node.id, 1, "m", "cli", files_written=changed, untracked=True)
        )
        watch.rebaseline()
        self.seen["after"] = watch.changed()
        return "done"


def test_a_backend_sees_the_session_worktrees_and_its_untracked_writes_are_committed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app", {"README.md": "hi\n"})
    project = tmp_path / "project"
    project.mkdir()
    settings = OrchestraSettings(
        workspace=WorkspaceSettings(repos={"app": RepoSettings(path=str(repo.path))}), project_root=project
    )
    built: list[_NativeWriter] = []

    def factory(runtime: AgentRuntime) -> _NativeWriter:
        assert isinstance(runtime, AgentRuntime)
        built.append(_NativeWriter(runtime))
        return built[0]

    events: list[Any] = []
    result = oc.run_pipeline(
        oc.parse_pipeline(PIPELINE), settings=settings, project_root=project, store=InMemorySessionStore(),
        git=SubprocessGit(), backend=factory, on_event=events.append,
    )
    assert result.succeeded
    seen = built[0].seen
    context = seen["repos"]["app"]
    assert context.root != repo.path.resolve() and context.branch.startswith("orchestra/native/")
    assert seen["changed"] == ["app:out.txt"] and seen["after"] == []
    [warning] = [e for e in events if isinstance(e, UntrackedWritesCommitted)]
    assert warning.paths == ("out.txt",)
    assert git(repo.path, "log", "-1", "--format=%(trailers:key=Orchestra-Untracked,valueonly)", warning.sha).strip() == "true"


def test_without_workspace_repos_there_is_nothing_to_watch(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    class Probe:
        def __init__(self, runtime: AgentRuntime) -> None:
            self.runtime = runtime

        def run(self, node: Any, prompt: str, context: Any, on_turn: Any = None) -> str:
            seen["watch"] = self.runtime.watch_worktrees()
            seen["repos"] = {name: c.root for name, c in self.runtime.repos().items()}
            return "ok"

    result = oc.run_pipeline(
        oc.parse_pipeline(PIPELINE), project_root=tmp_path, git=SubprocessGit(), backend=lambda runtime: Probe(runtime)
    )
    assert result.succeeded
    assert seen["watch"] is None and seen["repos"] == {"project": tmp_path.resolve()}
