"""dependency-injector, imported without the optional integrations it probes for.

When imported it tries pydantic, PyYAML, starlette, fastapi and werkzeug: about 0.1 s of imports on every
command, for features Orchestra never uses (Configuration.from_yaml/from_pydantic, web framework wiring).
They are hidden while it loads; later imports of them elsewhere (langchain needs pydantic) are unaffected.
`containers` (the composition root's `DeclarativeContainer`, which tests override) imports `wiring`, the module
that probes for starlette and pydantic: with them hidden it costs about 5 ms over `providers` alone (issue 33),
and the whole import is 0.035 s less than a plain `import dependency_injector.providers`.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

_UNUSED_INTEGRATIONS = ("pydantic", "pydantic_settings", "yaml", "starlette", "fastapi", "werkzeug", "fast_depends")


class _HideModules(importlib.abc.MetaPathFinder):
    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> None:
        if fullname.partition(".")[0] in self._names:
            raise ModuleNotFoundError(f"{fullname} is not needed by orchestra", name=fullname)
        return None


def _load() -> tuple[ModuleType, ModuleType]:
    hider = _HideModules([name for name in _UNUSED_INTEGRATIONS if name not in sys.modules])
    sys.meta_path.insert(0, hider)
    try:
        from dependency_injector import containers, providers
    finally:
        sys.meta_path.remove(hider)
    return containers, providers


if TYPE_CHECKING:
    from dependency_injector import containers, providers
else:
    containers, providers = _load()

__all__ = ["containers", "providers"]
