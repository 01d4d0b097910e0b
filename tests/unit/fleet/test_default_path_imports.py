"""The embedded default never imports the fleet's libraries: a run and a status without a fleet configured."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_PROBE = textwrap.dedent(
    """
    import sys
    from orchestra_cli.errors import run_guarded
    from orchestra_cli.app import app
    try:
        run_guarded(app, sys.argv[1:])
    except SystemExit:
        pass
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("celery", "kombu", "redis", "psycopg", "psycopg_pool"))
    print("LOADED", ",".join(loaded))
    """
)


def test_run_and_status_import_no_fleet_library(tmp_path: Path) -> None:
    (tmp_path / "p.dot").write_text("digraph d { start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit }\n")
    for command in (["run", "p.dot"], ["status"]):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, *command], cwd=tmp_path, capture_output=True, text=True, timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert "LOADED \n" in done.stdout, done.stdout + done.stderr
