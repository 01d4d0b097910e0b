"""The execution engine: traversal loop (runner), node execution, routing, retries, fidelity, checkpoints.

Import from the submodules (`orchestra_core.engine.runner.PipelineEngine`, ...); this package module stays
empty so that importing `engine.context` or `engine.outcome` stays cheap and free of cycles.
"""
