"""Content of the files git's fsck reads itself: `.gitmodules` and `.gitattributes` in every spelling."""

from __future__ import annotations

import pytest

from orchestra_core.agents.git_files import check_git_file
from orchestra_core.agents.git_names import is_gitattributes, is_gitmodules
from orchestra_core.agents.path_guard import ToolPathError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (".gitmodules", True), (".GitModules", True), (".gitmodules. .", True), (".gitmodules:$DATA", True),
        ("gitmod~1", True), ("GITMOD~4", True), ("gitmod~5", False), ("gi7eba~1", True), ("gi7eb~12", True),
        ("g~123456", True), ("~1234567", True), ("g~12345", False), ("gi7ebb~1", False), ("gi7eba~1x", False),
        (".g\u200citmodules", True), ("gitmodules", False), (".gitmodules-old", False),
    ],
)  # fmt: skip
def test_gitmodules_is_recognised_in_every_spelling_git_checks(name: str, expected: bool) -> None:
    assert is_gitmodules(name) is expected  # each checked against `git fsck` 2.39


@pytest.mark.parametrize(("name", "expected"), [("gitatt~3", True), ("gi7d29~1", True), ("gitatt~5", False)])
def test_gitattributes_is_recognised_in_its_short_names(name: str, expected: bool) -> None:
    assert is_gitattributes(name) is expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[submodule.evil]\n\turl = --upload-pack=x\n", "command-line option"),
        ('[submodule ""]\n\turl = https://a/b\n', "would leave"),
        ('[submodule "x"]\n\turl = ../:x\n', "escapes its root"),
        ('[submodule "x"]\n\turl = ./%0ax\n', "hides a line break"),
        ('[submodule "x"]\n\turl = https:///x\n', "gitmodulesUrl"),
        ('[submodule "x"]\n\turl = http::example.com/x\n', "gitmodulesUrl"),
        ('[submodule "x"]\n\turl = https://a/%0a\n', "gitmodulesUrl"),
        ('[submodule "x"]\n\turl = https://%0a@a/b\n', "gitmodulesUrl"),
        ('[submodule "x"]\n\turl = \\\n--upload-pack=x\n', "not a line"),
    ],
)
def test_gitmodules_urls_and_names_fsck_refuses_are_refused(text: str, problem: str) -> None:
    for name in (".gitmodules", "gitmod~2", "gi7eba~1"):
        with pytest.raises(ToolPathError, match=problem):
            check_git_file(name, name, text.encode())


def test_a_gitattributes_line_git_cannot_parse_is_refused() -> None:
    check_git_file(".gitattributes", ".gitattributes", b"a" * 2047 + b"\n*.txt text\n")
    for name in (".gitattributes", "gitatt~1", "gi7d29~1", "g~123456"):  # the last is a .gitmodules name too
        with pytest.raises(ToolPathError, match=r":1: a line of 2048 bytes"):
            check_git_file(name, name, b"a" * 2048 + b"\n")
