"""attrs' generated methods come from the bytecode cache in later processes, and behave as attrs' own."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from pathlib import Path
from orchestra_cli.attrs_bytecode import install
cache = install(Path(sys.argv[1]))
import attrs

@attrs.frozen(kw_only=True)
class Point:
    x: int
    y: int = 0
    FIELDS

@attrs.define
class Box:
    items: list[int] = attrs.field(factory=list)

def twin(with_y):
    if with_y:  # a second class of the same name and other fields: attrs adds `-1` to its methods' file name
        @attrs.frozen
        class Twin:
            x: int
            y: int = 0
    else:
        @attrs.frozen
        class Twin:
            x: int
    return Twin

twin(False)
Again = twin(True)
point = Point(x=1, y=2)
salt = hash("<attrs generated hash __main__.Point>")
box = Box()
box.items.append(3)
print(json.dumps({
    "compiled": sorted(cache.compiled),
    "hash_is_attrs": hash(point) == hash((salt, *attrs.astuple(point))),
    "equal": point == Point(x=1, y=2) and point != Point(x=1, y=3),
    "repr": repr(point),
    "box": repr(box),
    "frozen": _frozen(point),
    "again_hash_is_attrs": hash(Again(1)) == hash((hash("<attrs generated hash __main__.twin.<locals>.Twin>"), 1, 0)),
}))
"""
FROZEN = """
def _frozen(value):
    try:
        value.x = 5
    except attrs.exceptions.FrozenInstanceError:
        return True
    return False
"""


def probe(cache: Path, *, seed: int, fields: str = "", env: dict[str, str] | None = None) -> dict[str, object]:
    script = FROZEN + PROBE.replace("FIELDS", fields or "pass")
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment |= {"PYTHONHASHSEED": str(seed), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", script, str(cache)], capture_output=True, text=True, env=environment, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_later_process_compiles_nothing_and_gets_attrs_methods_with_its_own_hash_salt(tmp_path: Path) -> None:
    cache = tmp_path / "attrs.bin"
    first = probe(cache, seed=1)
    assert first["compiled"] == [
        "<attrs generated methods __main__.Box>",
        "<attrs generated methods __main__.Point>",
        "<attrs generated methods __main__.twin.<locals>.Twin-1>",
        "<attrs generated methods __main__.twin.<locals>.Twin>",
    ]
    assert cache.is_file()
    second = probe(cache, seed=2)  # another str hash seed: another salt in Point.__hash__
    assert second["compiled"] == []
    assert second["hash_is_attrs"] and second["equal"] and second["frozen"] and second["again_hash_is_attrs"]
    assert second["repr"] == first["repr"] == "Point(x=1, y=2)"
    assert second["box"] == "Box(items=[3])"


def test_a_changed_class_is_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "attrs.bin"
    probe(cache, seed=1)
    changed = probe(cache, seed=2, fields="z: str = 'z'")
    assert changed["compiled"] == ["<attrs generated methods __main__.Point>"]
    assert changed["repr"] == "Point(x=1, y=2, z='z')" and changed["hash_is_attrs"]
    assert probe(cache, seed=3, fields="z: str = 'z'")["compiled"] == []


def test_nothing_is_written_under_pythondontwritebytecode(tmp_path: Path) -> None:
    cache = tmp_path / "attrs.bin"
    assert probe(cache, seed=1, env={"PYTHONDONTWRITEBYTECODE": "1"})["equal"]
    assert not cache.exists()


DAMAGED = [
    b"",
    b"not marshal",
    marshal.dumps({"<attrs generated methods __main__.Point>": (b"x", None)}),
    marshal.dumps({"<attrs generated methods __main__.Point>": (b"x", None, b"not code")}),
]


@pytest.mark.parametrize("content", DAMAGED)
def test_a_damaged_cache_is_compiled_over(tmp_path: Path, content: bytes) -> None:
    cache = tmp_path / "attrs.bin"
    cache.write_bytes(content)
    assert len(probe(cache, seed=1)["compiled"]) == 4
    assert probe(cache, seed=2)["compiled"] == []
