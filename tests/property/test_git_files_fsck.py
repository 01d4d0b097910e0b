"""The guard against git's own fsck: names and `.gitmodules`/`.gitattributes` contents built from the pieces
git treats specially; whatever write-file accepts, a commit of it passes `git fsck --strict`."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.agents.builtin_tools import write_file
from orchestra_core.agents.path_guard import ToolPathError
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker
from tests.support.git_repos import git

NAME_PIECES = [
    ".gitmodules", ".GitModules", ".gitattributes", "gitmod~1", "gitmod~4", "gitmod~5", "gi7eba~1", "gi7eb~12",
    "g~123456", "~1234567", "gitatt~2", "gi7d29~9", ".git", "git~1", ".orchestra", " ", ".", ":$DATA", "\u200c",
    "x", "-", "~",
]  # fmt: skip
MODULE_LINES = [
    '[submodule "x"]', "[submodule.x]", '[submodule ""]', '[submodule "../y"]', '[core]', "\tpath = x",
    "\tpath = -x", "\turl = https://example.com/x", "\turl = --upload-pack=x", "\turl = https:///x",
    "\turl = http::example.com/x", "\turl = ./%0ax", "\turl = ../:x", "\turl = ..\\\\:x", "\turl = https://a/%0a",
    "\turl = https://%0a@a/b", "\turl = ssh://h/x", "\tupdate = !sh", "\tupdate = rebase", "\tURL = -a",
    '\turl = "x # y"', "# comment", "\turl = \\", "--x",
]  # fmt: skip
ATTRIBUTE_LINES = ["*.txt text", "*.bin -diff", "a" * 2046, "a" * 2047, "a" * 2048, "# c", ""]


@st.composite
def entries(draw: st.DrawFn) -> tuple[str, str]:
    parts = draw(st.lists(st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=3).map("".join), min_size=1, max_size=2))
    lines = draw(st.lists(st.sampled_from(MODULE_LINES + ATTRIBUTE_LINES), max_size=5))
    return "/".join(parts), "\n".join(lines) + "\n"


def _fsck_clean(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "agent")
    result = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@settings(max_examples=80)
@given(st.lists(entries(), min_size=1, max_size=3))
def test_whatever_write_file_accepts_passes_git_fsck(files: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        git(root, "init", "-q", "-b", "main")
        repo = RepoContext("project", root)
        for path, content in files:
            try:
                write_file(repo, WriteTracker(), path, content)
            except (ToolPathError, OSError):
                continue
            except Exception as error:  # the tools' usage errors (a file where a directory is wanted)
                assert type(error).__name__ == "ToolUsageError", error
        _fsck_clean(root)
