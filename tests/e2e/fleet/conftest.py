"""The fleet's end-to-end tests run one after another on one test worker (`make test` uses `--dist loadgroup`).

Each starts its own Celery workers beside its Redis and PostgreSQL servers; several at once on a small machine
overloaded it until a lost worker's pickup and the nodes' timing ran far past what the tests allow.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/fleet/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.xdist_group("fleet"))
