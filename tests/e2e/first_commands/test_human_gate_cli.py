"""A human gate asked on the console by `orchestra run` lists each option once: `1. [A] Approve`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.orchestra_project import ORCHESTRA

PIPELINE = """digraph gate {
    start  [shape=Mdiamond]
    exit   [shape=Msquare]
    review [shape=hexagon, label="Ship it?"]
    fix    [shape=parallelogram, tool_command="true"]
    start -> review
    review -> exit [label="[A] Approve"]
    review -> fix  [label="[R] Reject"]
    fix -> exit
}
"""


def test_the_console_gate_lists_each_option_once(tmp_path: Path) -> None:
    (tmp_path / "pipeline.dot").write_text(PIPELINE)
    result = subprocess.run(
        [str(ORCHESTRA), "run", "pipeline.dot", "--backend", "simulate"],
        input="A\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr + result.stdout
    shown = result.stdout + result.stderr
    assert "1. [A] Approve" in shown and "2. [R] Reject" in shown
    assert "[A] [A]" not in shown and "[R] [R]" not in shown
