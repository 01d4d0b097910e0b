"""The ArtifactStore contract (Attractor 5.5): named JSON values, copies in and out, safe ids."""

from __future__ import annotations

from typing import Any

from orchestra_core.ports.artifact_store import ArtifactNotFoundError, ArtifactStore
from orchestra_core.testing.contracts._base import PortContract, cases, raises


class ArtifactStoreContract(PortContract):
    """A runner implements `make_store()`: an empty store. Keeping large artifacts in files is the
    adapter's own business (the file-backed store tests it beside its runner)."""

    def make_store(self) -> ArtifactStore:
        """A new, empty store (use `self.tmp` for files)."""
        raise NotImplementedError

    def test_is_an_artifact_store(self) -> None:
        assert isinstance(self.make_store(), ArtifactStore)

    def test_store_and_retrieve(self) -> None:
        store = self.make_store()
        info = store.store("plan.v1", "the plan", {"steps": ["a", "b"], "n": 2})
        assert (info.id, info.name, info.size_bytes > 0) == ("plan.v1", "the plan", True)
        assert store.retrieve("plan.v1") == {"steps": ["a", "b"], "n": 2}
        assert store.has("plan.v1") and not store.has("other")

    def test_stored_values_are_copies(self) -> None:
        store = self.make_store()
        data: dict[str, list[int]] = {"items": [1]}
        store.store("x", "x", data)
        data["items"].append(2)
        store.retrieve("x")["items"].append(3)
        assert store.retrieve("x") == {"items": [1]}

    def test_list_keeps_first_store_order_and_replacing_updates(self) -> None:
        store = self.make_store()
        store.store("b", "B", 1)
        store.store("a", "A", 2)
        store.store("b", "B2", 3)
        assert [(i.id, i.name) for i in store.list()] == [("b", "B2"), ("a", "A")]
        assert store.retrieve("b") == 3

    def test_remove_and_clear(self) -> None:
        store = self.make_store()
        store.store("a", "A", "text")
        store.store("b", "B", "x" * 200_000)
        store.remove("a")
        store.remove("a")
        assert [i.id for i in store.list()] == ["b"]
        store.clear()
        assert store.list() == []
        with raises(ArtifactNotFoundError, match="artifact not found: 'b'"):
            store.retrieve("b")

    def test_large_artifacts_round_trip(self) -> None:
        store = self.make_store()
        big = {"log": "line\n" * 50_000}
        info = store.store("big", "big log", big)
        assert info.size_bytes > 100 * 1024
        assert store.retrieve("big") == big

    @cases(empty=("",), escape=("../escape",), slash=("a/b",), hidden=(".hidden",), too_long=("x" * 300,))
    def test_ids_must_be_safe_names(self, bad_id: str) -> None:
        with raises(ValueError, match="artifact id"):
            self.make_store().store(bad_id, "n", 1)

    def test_data_must_be_json(self) -> None:
        data: Any = {1, 2}
        with raises(ValueError, match="not JSON-serializable"):
            self.make_store().store("x", "n", data)
