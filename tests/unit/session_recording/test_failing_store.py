"""A store that fails under the recorder stops the run with a clear error; what was written stays readable."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from orchestra_core.model.checkpoint import RunStatus
from orchestra_core.model.store_errors import StoreUnavailableError
from orchestra_core.ports.session_store import SessionStatus
from orchestra_core.session.api import latest_checkpoint
from orchestra_core.testing.session_store import InMemorySessionStore
from tests.support.engine import linear
from tests.support.sessions import RecordedRun, story


class _DyingStore(InMemorySessionStore):
    """Accepts `appends` appends, then every write fails as an unreachable store would."""

    location = "cxdb://10.0.0.9:9009"

    def __init__(self, appends: int) -> None:
        super().__init__()
        self.left = appends

    def append(self, *args: Any, **kwargs: Any) -> Any:
        if self.left <= 0:
            raise StoreUnavailableError(f"cannot reach CXDB at {self.location}: connection refused")
        self.left -= 1
        return super().append(*args, **kwargs)


@pytest.mark.parametrize("appends", [0, 4, 7, 12])
def test_a_store_failing_in_the_checkpoint_sink_stops_the_run_clearly(
    appends: int, caplog: pytest.LogCaptureFixture
) -> None:
    store = _DyingStore(appends)
    run = RecordedRun(store)
    with caplog.at_level(logging.WARNING):
        result = run.run(linear("a", "b", "c"))
    assert result.status is RunStatus.FAIL
    assert "could not save the checkpoint" in result.failure_reason
    assert f"session {run.session_id} in {store.location}" in result.failure_reason
    assert "cannot reach CXDB at cxdb://10.0.0.9:9009: connection refused" in result.failure_reason
    assert " object at 0x" not in result.failure_reason + caplog.text
    stopped_after = result.completed_nodes[-1] if result.completed_nodes else "start"
    assert f"could not save the checkpoint after {stopped_after} to" in result.failure_reason
    assert "done" not in result.completed_nodes  # no node ran after the checkpoint that could not be stored
    written = story(store, run.session_id)
    assert len(written) == appends
    found = latest_checkpoint(store, run.session_id)
    checkpoints = [line for line in written if line.startswith("checkpoint")]
    assert (found is None) == (not checkpoints)
    if found is not None:
        assert found.checkpoint.current_node == (checkpoints[-1].split()[1].replace("-", ""))
    assert store.get_session(run.session_id).status is (
        SessionStatus.RUNNING if appends else SessionStatus.NEW
    )
