"""Path components git (and Orchestra) give a meaning on some system: spellings of `.git`, `.gitmodules` and
`.gitattributes` as git's fsck recognises them (case, HFS+-ignorable code points, NTFS trailing dots and
spaces, streams and 8.3 short names), and Orchestra's state directory."""

from __future__ import annotations

from orchestra_core.model.layout import STATE_DIR

# Code points HFS+ ignores in file names: `.g\u200cit` is `.git` to macOS (git's fsck `is_hfs_dotgit`).
_HFS_IGNORABLE = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)


def git_name(name: str) -> str:
    """A path component as git compares it for `.git`: case folded, HFS+-ignorable code points dropped, an
    NTFS stream (`:...`) and trailing dots and spaces cut."""
    folded = "".join(char for char in name if char not in _HFS_IGNORABLE).casefold()
    return folded.split(":", 1)[0].rstrip(". ")


def is_dotgit(name: str) -> bool:
    """Whether git would treat this path component as `.git` on some system (fsck's `hasDotgit`)."""
    return git_name(name) in (".git", "git~1")


def is_state_dir(name: str) -> bool:
    """Whether this component is Orchestra's state directory on some system (`.ORCHESTRA` on macOS)."""
    return git_name(name) == STATE_DIR


def is_gitmodules(name: str) -> bool:
    """Whether git's fsck checks a blob of this name as `.gitmodules` (its `is_hfs_dotgitmodules` and
    `is_ntfs_dotgitmodules`: `.GitModules`, `.gitmodules. `, `gitmod~4`, `gi7eba~1`, ...)."""
    return _is_hfs_dot(name, "gitmodules") or _is_ntfs_dot(name, "gitmodules", "gi7eba")


def is_gitattributes(name: str) -> bool:
    """Whether git's fsck checks a blob of this name as `.gitattributes` (`gitatt~1`, `gi7d29~1`, ...)."""
    return _is_hfs_dot(name, "gitattributes") or _is_ntfs_dot(name, "gitattributes", "gi7d29")


def _is_hfs_dot(name: str, bare: str) -> bool:
    return "".join(char for char in name if char not in _HFS_IGNORABLE).casefold() == "." + bare


def _is_ntfs_dot(name: str, bare: str, short_prefix: str) -> bool:
    """git's `is_ntfs_dot_generic`: `.<bare>`, its 8.3 short name `<first six>~1..4` or the hashed fallback
    short name (`<prefix of short_prefix>~<digits>`, eight characters), each with trailing dots and spaces
    or an NTFS stream after it."""
    lower = "".join(char.lower() if char.isascii() else char for char in name)  # git's tolower: ASCII only
    if lower.startswith("." + bare):
        return _only_dots_and_spaces(name[len(bare) + 1 :])
    if lower[:6] == bare[:6] and name[6:7] == "~" and name[7:8] in ("1", "2", "3", "4"):
        return _only_dots_and_spaces(name[8:])
    tilde = name.find("~", 0, 7)
    if len(name) < 8 or tilde < 0 or name[tilde + 1] not in "123456789":
        return False
    if not all(char in "0123456789" for char in name[tilde + 1 : 8]):
        return False
    return lower[:tilde] == short_prefix[:tilde] and _only_dots_and_spaces(name[8:])


def _only_dots_and_spaces(rest: str) -> bool:
    """What NTFS ignores after a name: dots and spaces, up to the end or an alternate stream (`:`)."""
    return rest.split(":", 1)[0].strip(". ") == ""
