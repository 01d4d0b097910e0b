"""The one YAML reader: aliases, nesting and text are bounded, and every failure is a located ConfigError."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orchestra_adapters.config.orchestra_yaml import load_settings
from orchestra_adapters.config.yaml_source import (
    MAX_ALIAS_VALUES,
    MAX_YAML_DEPTH,
    load_yaml,
    parse_yaml,
    read_yaml,
)
from orchestra_core.model.input_files import MAX_YAML_BYTES
from orchestra_core.model.settings import ConfigError


def billion_laughs(levels: int = 9) -> str:
    """The classic: each level a list of nine aliases of the level before (9**levels strings)."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    return "\n".join(lines) + "\n"


def refused(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_yaml(text, "f.yaml")
    return caught.value


def test_a_billion_laughs_is_refused_early_naming_the_line() -> None:
    started = time.monotonic()
    error = refused(billion_laughs())
    # Expanding its 9**9 strings would take minutes and gigabytes; refusing it takes milliseconds. The bound
    # is loose so a loaded CI machine cannot fail it.
    assert time.monotonic() - started < 10
    assert error.file == "f.yaml" and error.line == 5
    assert f"expand to more than {MAX_ALIAS_VALUES} values" in error.detail


def test_a_billion_laughs_of_mappings_is_refused_too() -> None:
    lines = ["m0: &m0 {a: 1, b: 2, c: 3}"]
    lines += [f"m{n}: &m{n} {{a: *m{n - 1}, b: *m{n - 1}, c: *m{n - 1}, d: *m{n - 1}}}" for n in range(1, 30)]
    assert "expand to more than" in refused("\n".join(lines)).detail


def test_aliases_within_the_bound_are_read_as_before() -> None:
    source = parse_yaml("base: &base {model: smart, tools: [a, b]}\none: *base\ntwo: {<<: *base, model: cheap}\n", "f.yaml")
    assert source.data["one"] == {"model": "smart", "tools": ["a", "b"]}
    assert source.data["two"] == {"model": "cheap", "tools": ["a", "b"]}


def test_a_large_document_without_aliases_is_not_limited_by_the_alias_bound() -> None:
    values = MAX_ALIAS_VALUES + 1000
    text = "items:\n" + "".join(f"- v{index}\n" for index in range(values))
    assert len(parse_yaml(text, "f.yaml").data["items"]) == values


def test_a_recursive_alias_is_refused() -> None:
    assert "recursive alias" in refused("a: &a [1, *a]\n").detail
    assert "recursive alias" in refused("a: &a {b: *a}\n").detail


def test_deep_nesting_is_refused_with_the_bound() -> None:
    deep = "a: " + "[" * (MAX_YAML_DEPTH + 5) + "]" * (MAX_YAML_DEPTH + 5)
    assert refused(deep).detail == f"YAML nested more than {MAX_YAML_DEPTH} levels deep"
    assert refused("a: " + "{b: " * 5000 + "1" + "}" * 5000).detail.startswith("YAML nested more than")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a: "\\ud800"\n', "lone surrogate"),
        ("a: " + "9" * 5000 + "\n", "invalid YAML value: Exceeds the limit"),
        ("a: 2024-13-45\n", "invalid YAML value: month must be in 1..12"),
        ("a: &a [[1]]\n? *a\n: 3\n", "invalid YAML value: unhashable type"),
        ("a: [1\n", "YAML syntax error"),
        ("a: 1\n---\nb: 2\n", "YAML syntax error"),
    ],
)
def test_values_ruamel_cannot_build_are_config_errors(text: str, expected: str) -> None:
    assert expected in refused(text).detail


def test_load_yaml_is_the_round_trip_document_with_lines() -> None:
    document = load_yaml("a:\n  b: 1\n", "f.yaml")
    assert document["a"].lc.line == 1


def test_a_fifo_config_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "orchestra.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"is a FIFO \(named pipe\), not a regular file"):
        load_settings(fifo)


def test_an_oversized_yaml_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(ConfigError, match="larger than the limit of 1 MiB"):
        read_yaml(path)


def test_non_utf8_yaml_names_the_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.yaml"
    path.write_bytes(b"backend: simulate\nx: \xfe\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert caught.value.line == 2 and "byte 0xfe at offset 21" in caught.value.detail


def test_a_billion_laughs_orchestra_yaml_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.yaml"
    path.write_text(billion_laughs(), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"orchestra.yaml:5: YAML aliases here expand"):
        load_settings(path)


def test_non_string_unknown_keys_are_reported_not_crashed_on(tmp_path: Path) -> None:
    path = tmp_path / "orchestra.yaml"
    path.write_text("backend: simulate\n&a : x\n1: y\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key"):
        load_settings(path)
