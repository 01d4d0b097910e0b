"""Fixtures for the session end-to-end tests: temp projects driven through real `orchestra` processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.sessions.projects import Project
from tests.support.cxdb_server import FakeCxdbServer


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with the `steps` pipeline and the default store (SQLite in .orchestra/)."""
    return Project.create(tmp_path / "project")


@pytest.fixture
def cxdb() -> Iterator[FakeCxdbServer]:
    with FakeCxdbServer() as server:
        yield server


@pytest.fixture
def cxdb_project(tmp_path: Path, cxdb: FakeCxdbServer) -> Project:
    """A project whose orchestra.yaml stores sessions in the (fake) CXDB server."""
    return Project.create(
        tmp_path / "project", storage={"backend": "cxdb", "addr": cxdb.addr, "url": cxdb.url}
    )
