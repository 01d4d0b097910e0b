"""The content of the files git's fsck reads itself (`.gitmodules`, `.gitattributes`, in every spelling it
recognises): an agent may write them only with content fsck accepts, so a session branch stays clean."""

from __future__ import annotations

from orchestra_core.agents.git_names import is_gitattributes, is_gitmodules
from orchestra_core.agents.gitmodules import check_gitmodules
from orchestra_core.agents.path_guard import ToolPathError

# git's attr.h: fsck refuses a .gitattributes blob over ATTR_MAX_FILE_SIZE or with a line of
# ATTR_MAX_LINE_LENGTH bytes or more (`gitattributesLarge`, `gitattributesLineLength`).
MAX_GITATTRIBUTES_BYTES = 100 * 1024 * 1024
MAX_GITATTRIBUTES_LINE_BYTES = 2048


def is_checked_file(name: str) -> bool:
    """Whether a file of this name has its content checked before it is written or committed."""
    return is_gitmodules(name) or is_gitattributes(name)


def check_git_file(path: str, name: str, data: bytes) -> None:
    """Refuse content that git's fsck would flag in a file named `name` (the last component of `path`).

    Raises:
        ToolPathError: `.gitmodules` content as `check_gitmodules` says; `.gitattributes` over 100 MiB or
            with a line of 2,048 bytes or more. The message names the file and the problem.
    """
    if is_gitmodules(name):  # a hashed 8.3 name (`g~123456`) is both: fsck checks it as both
        check_gitmodules(path, data)
    if is_gitattributes(name):
        _check_gitattributes(path, data)


def _check_gitattributes(path: str, data: bytes) -> None:
    if len(data) > MAX_GITATTRIBUTES_BYTES:
        raise ToolPathError(f"{path}: a .gitattributes file of {len(data)} bytes is larger than git accepts")
    for number, line in enumerate(data.split(b"\0", 1)[0].split(b"\n"), start=1):
        if len(line) >= MAX_GITATTRIBUTES_LINE_BYTES:
            raise ToolPathError(
                f"{path}:{number}: a line of {len(line)} bytes; git reads .gitattributes lines of at most "
                f"{MAX_GITATTRIBUTES_LINE_BYTES - 1} bytes"
            )
