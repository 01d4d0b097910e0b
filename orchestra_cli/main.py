"""Console entry point."""

from __future__ import annotations


def main() -> None:
    from orchestra_cli.app import app
    from orchestra_cli.errors import run_guarded

    run_guarded(app)
