"""Shared fixtures: hermetic environment (no global git config, fixed locale and time zone)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from tests.support.environment import hermetic_env

if TYPE_CHECKING:
    from tests.support.fleet_servers import PostgresCluster, RedisServer

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    wanted = hermetic_env(tmp_path_factory.mktemp("home"))
    for key in set(os.environ) - set(wanted):
        monkeypatch.delenv(key)
    for key, value in wanted.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def examples_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A throwaway redis-server on loopback, for the tests of this pytest process (tests/support/fleet_servers.py)."""
    from tests.support.fleet_servers import running_redis

    with running_redis() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster on a Unix socket, for the tests of this pytest process."""
    from tests.support.fleet_servers import running_postgres

    with running_postgres() as cluster:
        yield cluster


@pytest.fixture
def postgres_dsn(postgres_cluster: PostgresCluster) -> str:
    """The DSN of a fresh, empty database of the throwaway cluster."""
    return postgres_cluster.new_database()
