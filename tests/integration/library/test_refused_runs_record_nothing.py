"""A run that bad input stops (an unusable workspace repo) raises before its session exists: the store lists
nothing, for the library as for the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

import orchestra_core as oc
from orchestra_adapters.container import build_container, close_container, run_arguments
from tests.support.git_repos import make_repo

STEPS = """
digraph steps {
    start [shape=Mdiamond]; done [shape=Msquare]
    a [shape=parallelogram, tool_command="echo a"]
    start -> a -> done
}
"""


def test_an_unusable_workspace_repo_stops_the_run_before_its_session_exists(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    config = {"workspace": {"repos": {"app": {"path": str(tmp_path / "plain")}}}}
    container = build_container(config=config, project_root=tmp_path, backend="simulate")
    try:
        with pytest.raises(oc.OrchestraError, match=r"workspace\.repos\.app\.path: .* is not a git repository"):
            oc.run_pipeline(oc.parse_pipeline(STEPS), **run_arguments(container))
        assert container.session_store().list_sessions() == []

        make_repo(tmp_path / "plain")  # fixed: the run starts and records its session
        result = oc.run_pipeline(oc.parse_pipeline(STEPS), **run_arguments(container))
        assert result.succeeded
        assert [s.session_id for s in container.session_store().list_sessions()] == [result.session_id]
    finally:
        close_container(container)
