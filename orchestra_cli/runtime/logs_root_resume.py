"""`orchestra resume --logs-root DIR [PIPELINE.dot]`: continue from a run directory's checkpoint.json, or from
the store's checkpoint of the same session when that one is further on (checkpoint.json is written in the
background and may lag the store by the last node when the runner was killed)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from orchestra_cli.runtime.options import RunOptions

if TYPE_CHECKING:
    from orchestra_core.model.checkpoint import Checkpoint
    from orchestra_core.ports.session_store import SessionStore
    from orchestra_core.runs.start import SessionStart


def resume_from_logs_root(options: RunOptions) -> int:
    """Resume the run whose directory is `options.logs_root`; its session keeps recording when the store
    has it, otherwise the continuation is recorded as a new session."""
    from orchestra_adapters.filesystem.run_directory import FileRunDirectory
    from orchestra_cli.errors import EXIT_FAILED, fail, user_errors
    from orchestra_cli.runtime.execute import check_run_providers, execute, make_container, prepare_graph
    from orchestra_core.graph.dot_loader import read_pipeline_text
    from orchestra_core.ports.run_directory import CHECKPOINT_FILE

    assert options.logs_root is not None
    with user_errors():
        directory = FileRunDirectory(str(options.logs_root))
        checkpoint = directory.load_checkpoint()
        if checkpoint is None:
            raise fail(f"{options.logs_root / CHECKPOINT_FILE}: no checkpoint to resume from")
        manifest = directory.read_manifest()
        if manifest is None:
            raise fail(f"{options.logs_root}: no manifest.json; is this a run directory?")
        source = options.pipeline or (Path(manifest.source_path) if manifest.source_path else None)
        if source is None:
            raise fail("the run directory does not say which pipeline it ran; give the pipeline file")
        container = make_container(options, source)
        text = read_pipeline_text(source)
        graph = prepare_graph(text, source, options, rules=container.run_rules())
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)

    def start(store: SessionStore) -> SessionStart:
        from orchestra_core.runs.start import start_from_run_directory

        assert source is not None and checkpoint is not None and manifest is not None
        latest = newest_checkpoint(store, manifest.session_id, checkpoint)
        return start_from_run_directory(store, manifest.session_id, latest, graph, source, text)

    return execute(options, container, start, graph)


def newest_checkpoint(store: SessionStore, session_id: str, on_disk: Checkpoint) -> Checkpoint:
    """The store's latest checkpoint of the session when it is further on than `on_disk` (more node visits or
    loop restarts, or finished where the file is not), else `on_disk`; a store without the session leaves
    the run directory's checkpoint as it is."""
    from orchestra_core.model.store_errors import SessionNotFoundError
    from orchestra_core.session.api import latest_checkpoint
    from orchestra_core.session.checkpoints import from_record

    try:
        found = latest_checkpoint(store, session_id) if session_id else None
    except SessionNotFoundError:
        return on_disk
    if found is None:
        return on_disk
    stored = from_record(found.checkpoint, found.turn.created_at)
    return stored if _progress(stored) > _progress(on_disk) else on_disk


def _progress(checkpoint: Checkpoint) -> tuple[int, int, bool]:
    return (checkpoint.node_visits, checkpoint.loop_restarts, checkpoint.finished)
