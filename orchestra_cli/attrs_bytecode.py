"""The bytecode of the methods attrs generates, cached beside Python's own, so a command compiles none of them.

attrs writes the source of each class's `__init__`, `__eq__`, `__hash__`, `__repr__`, ... when the class is
defined and compiles it: about 0.4 ms per class, and `orchestra run` defines some 200 classes (a third of its
start-up above its libraries' floor, issue 33). Python caches the bytecode of modules in `__pycache__`; this
caches the bytecode attrs compiles in the same place (`sys.pycache_prefix` honoured), keyed by the generated
file name and a digest of the source, so a class whose definition changes is compiled again. The one part of
the source that differs between processes, the per-class salt of `__hash__` (a str's hash, randomised per
process), is left out of the key and put back into the cached code. As for `.pyc` files, nothing is written
under PYTHONDONTWRITEBYTECODE or where the directory is not writable (`make bytecode` fills it beforehand).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import marshal
import os
import pkgutil
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import Any

import attr
import attr._make

# file name attrs gave the code -> (digest of its source without the salt, the salt in the code or None, the code
# marshalled: unmarshalled only when a class asks for it, the file holding the classes of every command)
Entry = tuple[bytes, int | None, bytes]
_SALT_MARK = "<orchestra: attrs hash salt>"


class AttrsBytecodeCache:
    """The cached code, what this process compiled, and the file they are kept in."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Entry] = _read(path)
        self.compiled: dict[str, Entry] = {}

    def compile_and_eval(
        self, script: str, globs: dict[str, Any] | None, locs: Mapping[str, object] | None = None, filename: str = ""
    ) -> None:
        """attrs' `_compile_and_eval`, taking the code from the cache when it has this source."""
        eval(self.code(script, filename), globs, locs)  # what attrs itself does with its source

    def code(self, script: str, filename: str) -> CodeType:
        """The code of attrs' `script`: cached, or compiled and kept for `save`."""
        if not filename:
            return compile(script, filename, "exec")
        salt = _salt(filename, script)
        keyed = script.replace(f"{salt},", _SALT_MARK) if salt is not None else script
        digest = hashlib.blake2b(keyed.encode(), digest_size=16).digest()
        cached = self.entries.pop(filename, None)  # a class is defined once: its bytes are not kept after
        if cached is not None and cached[0] == digest:
            code, old_salt = _code(cached[2]), cached[1]
            if code is not None:
                return code if old_salt is None or salt is None else _with_constant(code, old_salt, salt)
        code = compile(script, filename, "exec")
        self.compiled[filename] = (digest, salt, marshal.dumps(code))
        return code

    def save(self) -> None:
        """Add what this process compiled to the file (merged with what others wrote since), atomically."""
        if not self.compiled or sys.dont_write_bytecode:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            entries = {**_read(self.path), **self.compiled}
            temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            temporary.write_bytes(marshal.dumps(entries))
            os.replace(temporary, self.path)
        except OSError:
            return  # as Python does with a .pyc it cannot write


def install(path: Path | None = None) -> AttrsBytecodeCache | None:
    """Make attrs take its generated methods' code from the cache (`cache_path()` unless given) from now on,
    once per process; None when this attrs compiles its methods some other way."""
    if not callable(getattr(attr._make, "_compile_and_eval", None)):
        return None
    current = getattr(attr._make._compile_and_eval, "__self__", None)
    if isinstance(current, AttrsBytecodeCache):
        return current
    cache = AttrsBytecodeCache(path or cache_path())
    attr._make._compile_and_eval = cache.compile_and_eval
    atexit.register(cache.save)
    return cache


def cache_path() -> Path:
    """`__pycache__/attrs_bytecode.<python tag>.methods.bin` beside this module (or under sys.pycache_prefix): a
    new Python starts a new file. Code is a function of its source and the Python alone (attrs passes the globals
    it runs with), so another attrs needs no other file (nor `attr.__version__`, which imports
    importlib.metadata: 0.02 s)."""
    pyc = Path(importlib.util.cache_from_source(__file__))
    return pyc.with_name(pyc.name.removesuffix(".pyc") + ".methods.bin")


def _salt(filename: str, script: str) -> int | None:
    """The salt attrs put in this class's `__hash__` (the hash of the class's generated `hash` file name, which
    has no `-N` suffix: attrs adds one to the file name of a second class of the same name), when the source
    holds it."""
    prefix = "<attrs generated methods "
    if not filename.startswith(prefix):
        return None
    name = filename.removeprefix(prefix)
    for candidate in dict.fromkeys((name, re.sub(r"-\d+>$", ">", name))):
        salt = hash("<attrs generated hash " + candidate)
        if f"{salt}," in script:
            return salt
    return None


def _with_constant(code: CodeType, old: int, new: int) -> CodeType:
    """`code` with the integer constant `old` replaced by `new`, in its nested functions too."""
    constants = tuple(
        _with_constant(value, old, new)
        if isinstance(value, CodeType)
        else (new if type(value) is int and value == old else value)
        for value in code.co_consts
    )
    return code.replace(co_consts=constants)


def _read(path: Path) -> dict[str, Entry]:
    """The file's entries; those of another shape dropped, a damaged or missing file read as empty."""
    try:
        loaded = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {name: entry for name, entry in loaded.items() if isinstance(name, str) and _is_entry(entry)}


def _is_entry(entry: object) -> bool:
    return (
        isinstance(entry, tuple)
        and len(entry) == 3
        and isinstance(entry[0], bytes)
        and (entry[1] is None or type(entry[1]) is int)
        and isinstance(entry[2], bytes)
    )


def _code(marshalled: bytes) -> CodeType | None:
    try:
        code = marshal.loads(marshalled)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def fill() -> int:
    """Import every module of Orchestra's packages that imports (optional extras missing are skipped) with the
    cache installed and written even under PYTHONDONTWRITEBYTECODE, as `compileall` does; the number of classes
    compiled. `make bytecode` runs this."""
    cache = install()
    if cache is None:
        return 0
    for package in ("orchestra_core", "orchestra_adapters", "orchestra_cli"):
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            try:
                importlib.import_module(module.name)
            except Exception:  # an optional extra not installed, or a module that needs a server
                continue
    count = len(cache.compiled)
    written = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        cache.save()
    finally:
        sys.dont_write_bytecode = written
    return count


if __name__ == "__main__":
    print(f"attrs bytecode: {fill()} classes compiled into {cache_path()}")
