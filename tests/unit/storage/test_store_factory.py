"""open_session_store picks and configures the backend from orchestra.yaml's `storage:` section."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestra_adapters.storage.cxdb.store import CxdbSessionStore
from orchestra_adapters.storage.factory import cxdb_endpoints, open_session_store, sqlite_path
from orchestra_adapters.storage.sqlite_store import SqliteSessionStore
from orchestra_core.model.settings import StorageSettings
from orchestra_core.model.store_errors import StoreError


def test_sqlite_is_the_zero_configuration_default(tmp_path: Path) -> None:
    store = open_session_store(StorageSettings(), tmp_path)
    try:
        assert isinstance(store, SqliteSessionStore)
        assert store.location == str(tmp_path / ".orchestra" / "orchestra.db")
        assert (tmp_path / ".orchestra" / "orchestra.db").exists()
    finally:
        store.close()


def test_sqlite_paths_are_relative_to_the_project_root(tmp_path: Path) -> None:
    assert sqlite_path(StorageSettings(path="state/s.db"), tmp_path) == tmp_path / "state" / "s.db"
    assert sqlite_path(StorageSettings(path="/abs/s.db"), tmp_path) == Path("/abs/s.db")
    assert sqlite_path(StorageSettings(path="~/s.db"), tmp_path) == Path.home() / "s.db"


def test_cxdb_endpoints_default_to_each_other() -> None:
    assert cxdb_endpoints(StorageSettings(backend="cxdb", addr="cx:9009")) == ("cx:9009", "http://cx:9010")
    assert cxdb_endpoints(StorageSettings(backend="cxdb", url="http://cx:8080/")) == (
        "cx:9009",
        "http://cx:8080/",
    )
    assert cxdb_endpoints(StorageSettings(backend="cxdb", addr="a:1", url="http://b:2")) == (
        "a:1",
        "http://b:2",
    )


def test_cxdb_store_is_opened_lazily(tmp_path: Path) -> None:
    store = open_session_store(StorageSettings(backend="cxdb", addr="127.0.0.1:1"), tmp_path)
    assert isinstance(store, CxdbSessionStore)
    store.close()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (StorageSettings(backend="cxdb"), "storage.addr"),
        (StorageSettings(backend="mysql"), "storage.backend"),  # type: ignore[arg-type]
        (StorageSettings(backend="postgres"), "storage.dsn"),
        (StorageSettings(backend="postgres", dsn_env="ORCHESTRA_TEST_NO_SUCH_DSN"), "storage.dsn_env"),
        (StorageSettings(backend="postgres", dsn="postgresql://a@b/c", dsn_env="X"), "storage.dsn or storage.dsn_env"),
    ],
)
def test_bad_settings_name_the_key(tmp_path: Path, settings: StorageSettings, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        open_session_store(settings, tmp_path)
