"""Every Python example of docs/library.md runs, each in a fresh git copy of examples/quickstart."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.git_repos import git
from tests.support.orchestra_project import copy_example

DOC = Path(__file__).resolve().parents[3] / "docs" / "library.md"
_BLOCK_RE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _examples() -> list[str]:
    return _BLOCK_RE.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_its_examples() -> None:
    assert len(_examples()) == 8


@pytest.mark.parametrize("number", range(len(_examples())))
def test_example_runs(number: int, tmp_path: Path) -> None:
    project = copy_example("quickstart", tmp_path / "demo")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Start")
    code = _examples()[number]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"example {number + 1}:\n{code}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
