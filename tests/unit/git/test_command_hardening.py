"""GitCommand's hardening: which commands get the filter-driver lookup, and how overrides reach git."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestra_adapters.git.command import (
    GitCommand,
    _config_environment,
    _may_run_drivers,
    _scoped_entries,
)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["rev-parse", "HEAD"], False),
        (["-c", "log.showRoot=true", "log", "-1"], False),
        (["cat-file", "--batch"], False),
        (["cat-file", "--filters", "--batch"], True),
        (["hash-object", "-w", "--no-filters", "--stdin-paths"], False),
        (["hash-object", "-w", "--stdin-paths"], True),
        (["worktree", "list", "--porcelain"], False),
        (["-c", "core.splitIndex=true", "worktree", "add", "x", "b"], True),
        (["status", "--porcelain=v2"], True),
        (["update-index", "--add", "--stdin"], True),
        (["-c", "diff.noprefix=false", "diff", "--cached"], True),
        (["reset", "--hard", "HEAD"], True),
        ([], False),
    ],
)
def test_commands_that_may_pass_content_through_a_driver_get_the_lookup(args: list[str], expected: bool) -> None:
    assert _may_run_drivers(args) is expected


def test_overrides_are_numbered_after_the_ones_already_in_the_environment() -> None:
    env = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Me"}
    assert _config_environment(env, {"filter.a=b.clean": ""}) == {
        "GIT_CONFIG_KEY_1": "filter.a=b.clean",
        "GIT_CONFIG_VALUE_1": "",
        "GIT_CONFIG_COUNT": "2",
    }
    assert _config_environment(env, {}) == {}


def test_scoped_entries_keep_values_with_newlines_and_spaces() -> None:
    raw = b"local\0filter.x.clean\nsh -c 'a\nb'\0global\0filter.lfs.smudge\ngit-lfs smudge -- %f\0"
    assert _scoped_entries(raw) == [
        ("local", "filter.x.clean", "sh -c 'a\nb'"),
        ("global", "filter.lfs.smudge", "git-lfs smudge -- %f"),
    ]


def test_every_call_runs_git_hardened(tmp_path: Path) -> None:
    fake = tmp_path / "git"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {tmp_path / "argv"}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    GitCommand(str(fake), base_env=dict(os.environ)).run(tmp_path, ["rev-parse", "HEAD"])
    argv = (tmp_path / "argv").read_text().splitlines()
    for setting in ("core.fsmonitor=false", "core.hooksPath=/dev/null", "protocol.allow=never", "log.showSignature=false"):
        assert argv[argv.index(setting) - 1] == "-c"
    assert argv[0] == "--no-pager" and argv[-2:] == ["rev-parse", "HEAD"]
