"""`orchestra resume --logs-root DIR [PIPELINE.dot]`: continue from a run directory's checkpoint.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestra_cli.runtime.options import RunOptions


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
        graph = prepare_graph(text, source, options)
        if graph is None:
            return EXIT_FAILED
        check_run_providers(container, options, graph)

    def start(store: Any) -> Any:
        return _start(store, manifest.session_id, checkpoint, graph, source, text)

    return execute(options, container, start, graph)


def _start(store: Any, session_id: str, checkpoint: Any, graph: Any, source: Path, text: str) -> Any:
    from attrs import evolve

    from orchestra_cli.runtime.session_start import RESUME, SessionStart, session_metadata
    from orchestra_core.model.store_errors import SessionNotFoundError
    from orchestra_core.session.api import latest_checkpoint
    from orchestra_core.session.checkpoints import PipelineSource, repo_heads

    blob = store.put_blob(text.encode("utf-8"))
    try:
        info = store.get_session(session_id)
    except SessionNotFoundError:
        info = store.create_session(session_metadata(graph, source))
        heads = {}
    else:
        found = latest_checkpoint(store, info.session_id)
        recorded = repo_heads(found.checkpoint) if found is not None else {}
        # The run directory's checkpoint decides where the code is; the store knows the branches.
        heads = {
            name: evolve(head, sha=checkpoint.workspace_snapshot.get(name, head.sha))
            for name, head in recorded.items()
        }
    return SessionStart(
        RESUME, info.session_id, text, PipelineSource(str(source), blob), checkpoint, heads
    )
