"""The path guard against an attacker's paths: symlinks into .git and .orchestra, git's other spellings of
.git, hard links, races, devices; the built-in tools go through it and answer with tool errors."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from orchestra_core.agents.builtin_tools import edit_file, list_files, read_file, search_code, write_file
from orchestra_core.agents.gitmodules import check_gitmodules
from orchestra_core.agents.path_guard import PathGuard, ToolPathError, is_dotgit
from orchestra_core.agents.repo_context import RepoContext
from orchestra_core.agents.tools import WriteTracker


@pytest.fixture
def repo(tmp_path: Path) -> RepoContext:
    root = tmp_path / "repo"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".orchestra").mkdir()
    (root / ".orchestra" / "orchestra.db").write_text("store")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    return RepoContext("project", root)


@pytest.mark.parametrize(
    "name",
    [".git", ".Git", ".GIT", ".git.", ".git ", ".git. . ", "git~1", "GIT~1", ".g\u200cit", ".git::$INDEX_ALLOCATION"],
)
def test_every_spelling_git_treats_as_dotgit_is_refused(repo: RepoContext, name: str) -> None:
    assert is_dotgit(name)
    tracker = WriteTracker()
    for path in (f"{name}/config", f"src/{name}/hooks/pre-commit", name):
        with pytest.raises(ToolPathError, match=r"\.git"):
            write_file(repo, tracker, path, "x")
    assert tracker.flush() == []
    assert (repo.root / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize("name", [".github", ".gitignore", ".gitattributes", "git", "x.git", ".gitkeep"])
def test_names_that_only_look_like_dotgit_are_fine(repo: RepoContext, name: str) -> None:
    assert not is_dotgit(name)
    assert write_file(repo, WriteTracker(), f"{name}/f" if name == ".github" else name, "ok").startswith("Wrote")


def test_a_symlink_to_git_dir_is_not_followed_for_reads_or_writes(repo: RepoContext) -> None:
    (repo.root / "gl").symlink_to(".git")
    (repo.root / "deep").mkdir()
    (repo.root / "deep" / "up").symlink_to("../.git/hooks")
    tracker = WriteTracker()
    for path in ("gl/config", "gl/hooks/post-commit", "deep/up/pre-commit"):
        with pytest.raises(ToolPathError, match=r"\.git"):
            write_file(repo, tracker, path, "[core]\n\tfsmonitor = touch /tmp/pwned\n")
    with pytest.raises(ToolPathError):
        read_file(repo, "gl/config")
    assert (repo.root / ".git" / "config").read_text() == "[core]\n"
    assert not (repo.root / ".git" / "hooks" / "post-commit").exists()


def test_a_git_pointer_file_of_a_linked_worktree_cannot_be_replaced(tmp_path: Path) -> None:
    root = tmp_path / "wt"
    root.mkdir()
    (root / ".git").write_text("gitdir: /somewhere/.git/worktrees/wt\n")
    (root / "gl").symlink_to(".git")
    repo = RepoContext("project", root)
    for path in (".git", "gl", "./.git"):
        with pytest.raises(ToolPathError):
            write_file(repo, WriteTracker(), path, "gitdir: /tmp/evil\n")
    assert (root / ".git").read_text() == "gitdir: /somewhere/.git/worktrees/wt\n"


def test_the_state_directory_is_refused_by_name_and_through_a_symlink(repo: RepoContext) -> None:
    (repo.root / "st").symlink_to(".orchestra")
    (repo.root / "src" / "state").symlink_to("../.orchestra/orchestra.db")
    for path in (".orchestra/orchestra.db", "st/orchestra.db", "src/state"):
        with pytest.raises(ToolPathError, match=r"\.orchestra"):
            write_file(repo, WriteTracker(), path, "x")
    assert (repo.root / ".orchestra" / "orchestra.db").read_text() == "store"


def test_symlinks_inside_the_repo_still_work_and_name_their_target(repo: RepoContext) -> None:
    (repo.root / "link.py").symlink_to("src/app.py")
    (repo.root / "abs.py").symlink_to(repo.root / "src" / "app.py")
    assert read_file(repo, "link.py") == "print('hi')\n"
    tracker = WriteTracker()
    write_file(repo, tracker, "abs.py", "print('bye')\n")
    assert tracker.flush() == ["project:src/app.py"]
    assert (repo.root / "src" / "app.py").read_text() == "print('bye')\n"


def test_symlinks_out_of_the_repo_and_loops_are_refused(repo: RepoContext, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    (repo.root / "out").symlink_to(tmp_path / "outside.txt")
    (repo.root / "rel").symlink_to("../outside.txt")
    (repo.root / "loop").symlink_to("loop")
    for path in ("out", "rel"):
        with pytest.raises(ToolPathError, match="leaves the project repo"):
            read_file(repo, path)
    with pytest.raises(ToolPathError, match="too many symbolic links"):
        read_file(repo, "loop")
    assert list_files(repo).splitlines() == ["src/app.py"]
    assert search_code(repo, "secret").startswith("No matches")


def test_a_hard_link_is_not_written(repo: RepoContext) -> None:
    os.link(repo.root / ".git" / "config", repo.root / "innocent.txt")
    with pytest.raises(ToolPathError, match="hard links"):
        write_file(repo, WriteTracker(), "innocent.txt", "[core]\n\tfsmonitor = evil\n")
    with pytest.raises(ToolPathError, match="hard links"):
        edit_file(repo, WriteTracker(), "innocent.txt", "[core]", "[evil]")
    assert (repo.root / ".git" / "config").read_text() == "[core]\n"


def test_a_fifo_or_device_is_refused_without_blocking(repo: RepoContext) -> None:
    os.mkfifo(repo.root / "pipe")
    (repo.root / "dev").symlink_to("/dev/zero")
    for path in ("pipe",):
        with pytest.raises(ToolPathError, match="not a regular file"):
            read_file(repo, path)
        with pytest.raises(ToolPathError, match="not a regular file"):
            write_file(repo, WriteTracker(), path, "x")
    with pytest.raises(ToolPathError, match="leaves"):
        read_file(repo, "dev")


def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(repo: RepoContext) -> None:
    guard = PathGuard(repo.root, "project")
    guarded = guard.resolve("work/file.txt")
    (repo.root / "work").symlink_to(".git")  # the attacker's swap, between the check and the open
    with pytest.raises(ToolPathError, match="changed into a symbolic link"):
        guard._open_parent("work/file.txt", guarded, create=True)
    assert not (repo.root / ".git" / "file.txt").exists()


def test_racing_swaps_never_land_a_write_in_git(repo: RepoContext) -> None:
    stop = threading.Event()
    target = repo.root / "race"

    def swap() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                target.mkdir()
                target.rmdir()
                target.symlink_to(".git")
                target.unlink()

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        for _ in range(300):
            with contextlib.suppress(ToolPathError, OSError):
                write_file(repo, WriteTracker(), "race/config", "owned")
    finally:
        stop.set()
        swapper.join()
    assert (repo.root / ".git" / "config").read_text() == "[core]\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/pwned\n', "command-line option"),
        ('[submodule "x"]\n\tpath = -x\n\turl = https://example.com/x\n', "command-line option"),
        ('[submodule "x"]\n\tpath = ../../x\n\turl = https://example.com/x\n', "leaves the repository"),
        ('[submodule "../../modules"]\n\tpath = x\n', "would leave"),
        ('[submodule "x"]\n\tupdate = !sh -c evil\n', "runs a command"),
        ('[submodule "x"]\n\turl = "https://e.com/\\nx"\n', "control character"),
        ("[submodule\n", "not a line"),
    ],
)
def test_a_gitmodules_git_would_refuse_is_refused(repo: RepoContext, text: str, problem: str) -> None:
    with pytest.raises(ToolPathError, match=problem):
        check_gitmodules(".gitmodules", text.encode())
    with pytest.raises(ToolPathError):
        write_file(repo, WriteTracker(), ".gitmodules", text)
    assert not (repo.root / ".gitmodules").exists()


def test_an_ordinary_gitmodules_is_written() -> None:
    check_gitmodules(
        ".gitmodules", b'[submodule "lib/x"]\n\tpath = lib/x\n\turl = https://example.com/x.git  # ok\n'
    )


@pytest.mark.parametrize("name", ["new\nline.txt", "carriage\rreturn"])
def test_a_line_break_in_a_name_is_refused_with_a_clear_message(repo: RepoContext, name: str) -> None:
    with pytest.raises(ToolPathError, match="line break"):
        write_file(repo, WriteTracker(), name, "x")


@pytest.mark.parametrize("name", ["tab\there.txt", "quote'\"s.txt", "-leading.txt", "sp ace.txt", "naïve-ünïcode.py"])
def test_other_odd_names_are_ordinary_files(repo: RepoContext, name: str) -> None:
    tracker = WriteTracker()
    write_file(repo, tracker, name, "x\n")
    assert tracker.flush() == [f"project:{name}"]
    assert read_file(repo, name) == "x\n"
    assert name in list_files(repo).splitlines()


@pytest.mark.parametrize("path", ["app/.orchestra/orchestra.db", ".ORCHESTRA/x", "a/.Orchestra./runs/x", "b/.orchestra"])
def test_a_state_directory_is_refused_at_any_depth_and_in_any_case(repo: RepoContext, path: str) -> None:
    # a project inside its repository keeps its `.orchestra` below the repo root; macOS folds case
    with pytest.raises(ToolPathError, match=r"\.orchestra, Orchestra's own state"):
        write_file(repo, WriteTracker(), path, "x")


def test_protected_directories_inside_the_repo_are_refused_through_any_path(repo: RepoContext) -> None:
    logs = repo.root / "logs" / "run"
    logs.mkdir(parents=True)
    (logs / "checkpoint.json").write_text("{}")
    (repo.root / "alias").symlink_to("logs")
    guarded = RepoContext("project", repo.root, protected=(logs, repo.root.parent / "elsewhere", repo.root.parent))
    for path in ("logs/run/checkpoint.json", "alias/run/checkpoint.json", "logs/run"):
        with pytest.raises(ToolPathError, match="Orchestra's own state"):
            write_file(guarded, WriteTracker(), path, "{}")
    assert (logs / "checkpoint.json").read_text() == "{}"
    assert write_file(guarded, WriteTracker(), "logs/other.txt", "ok").startswith("Wrote")  # beside it is fine
    assert list_files(guarded).splitlines() == ["logs/other.txt", "src/app.py"]


@pytest.mark.parametrize("path", [".gitmodules/x", "gitmod~1/x", "GI7EBA~1/x", ".gitattributes/x", "gitatt~2/x", "a/.GitModules/b"])
def test_gitmodules_and_gitattributes_cannot_become_directories(repo: RepoContext, path: str) -> None:
    with pytest.raises(ToolPathError, match="git reads it as a file"):
        write_file(repo, WriteTracker(), path, "x")


@pytest.mark.parametrize("name", [" lead.txt", "trail.txt ", "both ", "src/ inner .py"])
def test_spaces_around_a_name_are_kept(repo: RepoContext, name: str) -> None:
    tracker = WriteTracker()
    write_file(repo, tracker, name, "x")
    assert tracker.flush() == [f"project:{name}"] and (repo.root / name).read_text() == "x"
