"""What an agent may write into `.gitmodules`: nothing that git's fsck flags (an option as URL or path, a
URL that escapes its root or hides a line break, a command as update strategy, a name or path that leaves the
repository)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from orchestra_core.agents.git_names import is_dotgit
from orchestra_core.agents.path_guard import ToolPathError

_SECTION_RE = re.compile(r'^\[\s*([A-Za-z][A-Za-z0-9.-]*)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(?:[#;].*)?$')
_ENTRY_RE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def check_gitmodules(path: str, data: bytes) -> None:
    """Refuse `.gitmodules` content git would refuse to check out or clone.

    Raises:
        ToolPathError: The content is not text git's config parser reads, or a submodule's name, path, URL
            or update strategy is one git's fsck flags (`gitmodulesName`, `gitmodulesPath`,
            `gitmodulesUrl`, `gitmodulesUpdate`); the message names the submodule and the key.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolPathError(f"{path}: .gitmodules must be UTF-8 text") from None
    for name, key, value in _entries(path, text):
        problem = _problem(name, key, value)
        if problem is not None:
            raise ToolPathError(f"{path}: submodule {name!r}: {problem}; git refuses such a .gitmodules")


def _entries(path: str, text: str) -> Iterator[tuple[str, str, str]]:
    """(submodule name, key, value) of every entry of a `[submodule "name"]` section."""
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = _SECTION_RE.match(line)
        if header is not None:
            section = _submodule(header)
            if section is not None:
                _check_name(path, section)
            continue
        entry = _ENTRY_RE.match(line)
        if entry is None:
            raise ToolPathError(f"{path}:{number}: not a line git's config parser reads: {raw.strip()[:80]!r}")
        if section is not None:
            yield section, entry.group(1).lower(), _unquote(entry.group(2) or "")


def _submodule(header: re.Match[str]) -> str | None:
    """The submodule a section header names: `[submodule "name"]`, or the old `[submodule.name]`."""
    base, subsection = header.group(1).lower(), header.group(2)
    if base == "submodule" and subsection is not None:
        return subsection.replace('\\"', '"').replace("\\\\", "\\")
    if base.startswith("submodule.") and subsection is None:
        return base.removeprefix("submodule.")
    return None


def _check_name(path: str, name: str) -> None:
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith("/") or ".." in parts or any(is_dotgit(part) for part in parts):
        raise ToolPathError(f"{path}: submodule name {name!r} would leave the repository's module directory")


def _problem(name: str, key: str, value: str) -> str | None:
    if key in ("url", "path") and value.lstrip().startswith("-"):
        return f"its {key} {value!r} would be read as a command-line option"
    if key == "url" and any(ord(char) < 32 for char in value):
        return "its url holds a control character"
    if key == "url" and _bad_url(value):
        return f"its url {value!r} escapes its root or hides a line break (git's fsck: gitmodulesUrl)"
    if key == "path":
        parts = value.replace("\\", "/").split("/")
        if value.startswith("/") or ".." in parts or any(is_dotgit(part) for part in parts):
            return f"its path {value!r} leaves the repository or names .git"
    if key == "update" and value.lstrip().startswith("!"):
        return f"its update strategy {value!r} runs a command"
    return None


def _bad_url(url: str) -> bool:
    """git's `check_submodule_url`: a relative URL with an encoded line break or whose `../` climb ends at
    `:` or `/`; an http(s)/ftp(s) URL without a host, or with a line break in any part once decoded."""
    if url.startswith(("./", "../", ".\\", "..\\")):
        rest, climbs = url, 0
        while rest.startswith(("./", "../", ".\\", "..\\")):
            climbs += rest.startswith("..")
            rest = rest[3:] if rest.startswith("..") else rest[2:]
        return "\n" in unquote(url) or (climbs > 0 and rest[:1] in (":", "/"))
    for scheme in ("http", "https", "ftp", "ftps"):
        if url.startswith(scheme + "::"):
            return _bad_curl_url(url[len(scheme) + 2 :])
        if url.startswith(scheme + "://"):
            return _bad_curl_url(url)
    return False


def _bad_curl_url(url: str) -> bool:
    """git's `credential_from_url_gently` failing, or giving no host."""
    scheme_end = url.find("://")
    if scheme_end <= 0:
        return True
    start = scheme_end + 3
    end = start + len(re.match(r"[^/?#]*", url[start:]).group(0))  # type: ignore[union-attr]
    at = url.find("@", start)
    credentials, host = ("", url[start:end]) if at < 0 or end <= at else (url[start:at], url[at + 1 : end])
    parts = [url[:scheme_end], credentials, host, url[end:]]
    return not unquote(host) or any("\n" in unquote(part) for part in parts)


def _unquote(value: str) -> str:
    """A config value without its quotes and trailing comment (git's rules, simplified to what matters)."""
    result: list[str] = []
    quoted = False
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\" and index + 1 < len(value):
            result.append({"n": "\n", "t": "\t", "b": "\b"}.get(value[index + 1], value[index + 1]))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            result.append(char)
        index += 1
    return "".join(result).strip()
