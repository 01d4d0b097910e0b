"""Cassettes and answers files are read by the one YAML reader: bounded aliases, regular files, a size limit."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from orchestra_adapters.console.answers_file import load_answers_file
from orchestra_adapters.llm.cassette import CassetteError, load_cassette, parse_cassette
from orchestra_core.interview.interviewers import AnswersError
from orchestra_core.model.input_files import MAX_CASSETTE_BYTES, MAX_YAML_BYTES
from tests.unit.config.test_yaml_bounds import billion_laughs

CASSETTE_LAUGHS = billion_laughs() + "nodes:\n  plan: *l9\n"
ANSWERS_LAUGHS = billion_laughs() + "gate: *l9\n"


def test_a_billion_laughs_cassette_is_refused_quickly_naming_file_and_line() -> None:
    started = time.monotonic()
    with pytest.raises(CassetteError) as caught:
        parse_cassette(CASSETTE_LAUGHS, Path("cassette.yaml"))
    assert time.monotonic() - started < 10  # blocking would never end; loose for loaded CI machines
    assert str(caught.value).startswith("cassette.yaml:5: not valid YAML: YAML aliases here expand to more than")


def test_a_fifo_or_device_cassette_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "cassette.yaml"
    os.mkfifo(fifo)
    with pytest.raises(CassetteError, match=r"cannot read the cassette: is a FIFO"):
        load_cassette(fifo)
    with pytest.raises(CassetteError, match=r"cannot read the cassette: is a character device"):
        load_cassette(Path("/dev/zero"))


def test_an_oversized_cassette_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_bytes(b"default: x\n# " + b"x" * MAX_CASSETTE_BYTES)
    with pytest.raises(CassetteError, match="larger than the limit of 8 MiB"):
        load_cassette(path)


def test_a_cassette_with_ordinary_aliases_still_loads() -> None:
    text = "nodes:\n  a: &replies\n    - content: hi\n  b: *replies\n"
    cassette = parse_cassette(text, Path("c.yaml"))
    assert cassette.nodes["a"] == cassette.nodes["b"]


def test_a_billion_laughs_answers_file_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(ANSWERS_LAUGHS, encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(AnswersError, match=r"answers.yaml:5: not valid YAML: YAML aliases here expand"):
        load_answers_file(path)
    assert time.monotonic() - started < 10  # blocking would never end; loose for loaded CI machines


def test_answers_files_that_are_fifos_devices_oversized_or_not_utf8_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(AnswersError, match=r"fifo.yaml: cannot read the answers file: is a FIFO"):
        load_answers_file(fifo)
    with pytest.raises(AnswersError, match=r"cannot read the answers file: is a character device"):
        load_answers_file(Path("/dev/zero"))
    big = tmp_path / "big.yaml"
    big.write_bytes(b"gate: a\n# " + b"x" * MAX_YAML_BYTES)
    with pytest.raises(AnswersError, match="larger than the limit of 1 MiB"):
        load_answers_file(big)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"gate: caf\xe9\n")
    with pytest.raises(AnswersError, match=r"not UTF-8 text: byte 0xe9 at offset 9"):
        load_answers_file(latin)


def test_answers_keep_their_meaning_through_the_shared_reader(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("gate: [yes, 2, 1.5, true]\nother: &x approve\nthird: *x\n", encoding="utf-8")
    assert load_answers_file(path) == {
        "gate": ["yes", "2", "1.5", "yes"],
        "other": ["approve"],
        "third": ["approve"],
    }
