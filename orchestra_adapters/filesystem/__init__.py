"""Filesystem adapters: the run directory (checkpoint, manifest, stage files) and file-backed artifacts."""
