"""The FleetLedger contract run against the in-memory fake and PostgresFleetLedger (a fresh database each test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestra_core.ports.fleet import FleetLedger
from orchestra_core.testing.contracts.fleet_ledger import FleetLedgerContract
from orchestra_core.testing.fleet import InMemoryFleetLedger
from tests.support.fleet_servers import PostgresCluster

_CLUSTER: list[PostgresCluster] = []


class TestInMemoryFleetLedger(FleetLedgerContract):
    def make_ledger(self) -> FleetLedger:
        return InMemoryFleetLedger()


@pytest.fixture(scope="class")
def _cluster(postgres_cluster: PostgresCluster) -> Iterator[None]:
    _CLUSTER.append(postgres_cluster)
    yield
    _CLUSTER.clear()


@pytest.mark.usefixtures("_cluster")
class TestPostgresFleetLedger(FleetLedgerContract):
    def make_ledger(self) -> FleetLedger:
        from orchestra_adapters.dispatch.ledger import PostgresFleetLedger

        return PostgresFleetLedger(_CLUSTER[0].new_database())
