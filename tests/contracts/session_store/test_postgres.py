"""PostgresSessionStore passes the SessionStore contract, each test in a fresh database of a throwaway cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestra_adapters.storage.postgres.store import PostgresSessionStore
from orchestra_core.testing.contracts.session_store import SessionStoreContract
from tests.support.fleet_servers import PostgresCluster

_CLUSTER: list[PostgresCluster] = []


@pytest.fixture(autouse=True, scope="module")
def _cluster(postgres_cluster: PostgresCluster) -> Iterator[None]:
    _CLUSTER.append(postgres_cluster)
    yield
    _CLUSTER.clear()


class TestPostgresSessionStore(SessionStoreContract):
    capabilities = frozenset({"totals", "ranges"})

    def make_store(self) -> PostgresSessionStore:
        return PostgresSessionStore(_CLUSTER[0].new_database())


class TestPostgresSessionStoreWithSmallInlineLimit(SessionStoreContract):
    """Every payload goes through the blob table."""

    capabilities = frozenset({"totals", "ranges"})

    def make_store(self) -> PostgresSessionStore:
        return PostgresSessionStore(_CLUSTER[0].new_database(), inline_limit=0)
