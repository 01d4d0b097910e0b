"""Every shell block of README.md and docs/*.md marked runnable (`<!-- runnable -->` on the line before its
```sh fence) runs as written, in a fresh temporary directory, so the docs cannot drift from the code.

The block runs with `bash -e` in a directory that looks like an Orchestra checkout (`examples/` and
`.venv/` are links to this one's), with a temporary HOME and `orchestra` on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.docs.doc_texts import DOCS, ROOT, Block, blocks

RUNNABLE = [block for doc in DOCS for block in blocks(doc) if block.runnable]


def test_the_readme_quick_starts_are_runnable() -> None:
    readme = [block for block in RUNNABLE if block.doc.name == "README.md"]
    assert len(readme) >= 2 and all(block.language == "sh" for block in RUNNABLE)


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: block.where)
def test_a_runnable_block_runs(tmp_path: Path, block: Block) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "examples").symlink_to(ROOT / "examples")
    (checkout / ".venv").symlink_to(Path(sys.executable).parent.parent)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    result = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{block.where} failed:\n{block.text}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr
