"""Session branch names: the convention, git's ref rules, collisions and protected branches."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from fnmatch import fnmatchcase

SHORT_ID_LENGTH = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_ATTEMPTS = 10_000


def session_short_id(session_id: str) -> str:
    """The first 8 letters and digits of the session id, lower-cased (all of them if fewer)."""
    compact = re.sub(r"[^A-Za-z0-9]", "", session_id).lower()
    return compact[:SHORT_ID_LENGTH] or "session"


def ref_component(text: str, fallback: str) -> str:
    """`text` made into one valid ref path component (no `/`, no `..`, no leading dot, no `.lock`)."""
    component = _UNSAFE.sub("-", text.strip())
    component = re.sub(r"\.{2,}", ".", component)
    component = re.sub(r"-{2,}", "-", component).strip(".-")
    while component.endswith(".lock"):
        component = component[: -len(".lock")].rstrip(".-")
    return component or fallback


def session_branch_name(prefix: str, pipeline_name: str, session_id: str) -> str:
    """`{prefix}{pipeline}/{session-short-id}` with the pipeline name made ref-safe."""
    return f"{prefix}{ref_component(pipeline_name, 'pipeline')}/{session_short_id(session_id)}"


def free_branch_name(wanted: str, existing: Collection[str]) -> str:
    """`wanted`, or the first deterministic variant of it that can coexist with `existing` branches.

    Git cannot hold both `a/b` and `a/b/c`. When a prefix of `wanted` is itself a branch, that
    component gets a `-2`, `-3`, ... suffix; when `wanted` or a branch below it exists, the last
    component does.
    """
    taken = set(existing)
    parts = wanted.split("/")
    for _ in range(len(parts) + 1):  # each pass settles one component for good
        blocking = _first_branch_prefix(parts, taken)
        if blocking is not None:
            parts[blocking] = _next_free(parts[:blocking], parts[blocking], lambda name: name not in taken)
            continue
        if not _clashes("/".join(parts), taken):
            return "/".join(parts)
        parts[-1] = _next_free(parts[:-1], parts[-1], lambda name: not _clashes(name, taken))
    raise ValueError(f"no free branch name near {wanted!r}")


def _first_branch_prefix(parts: list[str], taken: set[str]) -> int | None:
    """Index of the last component of the shortest proper prefix of `parts` that is a branch."""
    for length in range(1, len(parts)):
        if "/".join(parts[:length]) in taken:
            return length - 1
    return None


def _clashes(name: str, taken: set[str]) -> bool:
    return name in taken or any(branch.startswith(name + "/") for branch in taken)


def _next_free(head: list[str], component: str, is_free: Callable[[str], bool]) -> str:
    for number in range(2, _MAX_ATTEMPTS):
        candidate = f"{component}-{number}"
        if is_free("/".join([*head, candidate])):
            return candidate
    raise ValueError(f"no free variant of {component!r}")


def is_protected(branch: str, patterns: Iterable[str]) -> bool:
    """Whether `branch` matches one of the fnmatch `patterns` (`*` also spans `/`)."""
    return any(fnmatchcase(branch, pattern) for pattern in patterns)
