"""`orchestra run` records a session that tells the same story as the run directory, which stays a mirror."""

from __future__ import annotations

import json
from pathlib import Path

from orchestra_adapters.filesystem.run_directory import FileRunDirectory
from orchestra_core.model import records as r
from orchestra_core.ports.session_store import SessionStatus
from tests.e2e.sessions.projects import STEP_NODES, STEPS, Project
from tests.support.sessions import records, story


def test_a_run_is_a_session_whose_turns_tell_the_run_directorys_story(project: Project) -> None:
    document = project.run_json("run", "steps.dot")
    session = document["session_id"]
    assert document["status"] == "success" and document["completed_nodes"] == STEP_NODES
    logs = Path(document["logs_root"])
    assert logs == project.root / ".orchestra" / "runs" / session

    with project.open_store() as store:
        info = store.get_session(session)
        assert info.status is SessionStatus.SUCCESS
        assert (info.metadata.pipeline, info.metadata.title) == ("steps", "survive a crash")
        lines = story(store, session)
        assert lines[:2] == ["lifecycle started", "checkpoint -"] and lines[-1] == "lifecycle completed"
        recorded = records(store, session)
        final_state = project.final_state(store, session)
        blob = store.get_blob(recorded[0].dot_blob)

    started = recorded[0]
    assert isinstance(started, r.PipelineLifecycle)
    assert started.logs_root == str(logs) and started.dot_path == "steps.dot"
    assert blob.decode() == STEPS
    completed = [x for x in recorded if isinstance(x, r.NodeExecution) and x.event is r.NodeEvent.COMPLETED]
    assert [x.node_id for x in completed] == document["completed_nodes"]
    for node in completed:
        status = json.loads((logs / node.node_id / "status.json").read_text(encoding="utf-8"))
        assert node.outcome is not None and status["outcome"] == node.outcome.status.value
        assert status["notes"] == node.outcome.notes
    assert [x.current_node for x in recorded if isinstance(x, r.CheckpointRecord)] == ["", *STEP_NODES]

    mirror = FileRunDirectory(str(logs))
    manifest = mirror.read_manifest()
    assert manifest is not None and manifest.session_id == session
    on_disk = mirror.load_checkpoint()
    assert on_disk is not None
    assert final_state["completed_nodes"] == list(on_disk.completed_nodes)
    assert final_state["context"] == json.loads(
        json.dumps(dict(on_disk.context))
        .replace(str(project.root), "<project>")
        .replace(f"runs/{session}", "runs/<session>")
    )
    assert final_state["status"] == on_disk.status.value == "success"
    assert project.ran() == ["one", "gate", "three"]


def test_resuming_a_finished_session_reports_the_same_run_document(project: Project) -> None:
    first = project.run_json("run", "steps.dot")
    again = project.run_json("resume", first["session_id"])
    assert again == first
    text = project.cli("resume", first["session_id"])
    assert text.returncode == 0 and "already ended (success)" in text.stdout
    assert project.ran() == ["one", "gate", "three"]  # nothing ran again
    with project.open_store() as store:
        assert story(store, first["session_id"])[-1] == "lifecycle completed"  # nothing appended either
