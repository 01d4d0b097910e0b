"""Package attributes imported on first use (PEP 562), so importing a package loads none of its modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for `exports` (name -> module holding it).

    A name that is the last part of its module's path (`"events": "pkg.model.events"`) is the module itself.
    Each value is imported once and kept in the package's namespace.
    """
    namespace = importlib.import_module(package).__dict__

    def get(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        loaded = importlib.import_module(module)
        value = loaded if module.rpartition(".")[2] == name else getattr(loaded, name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted({*namespace.get("__all__", ()), *exports})

    return get, listing
