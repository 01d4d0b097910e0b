"""`orchestra compile` through real subprocesses: exit codes, output, JSON shape, rendering, no tracebacks."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

ORCHESTRA = Path(sys.executable).with_name("orchestra")
VALID = """digraph Release {
    graph [goal="Ship v2", model_stylesheet="* { llm_model: worker; } #review { llm_model: smart; }"]
    node [timeout="15m"]
    start [shape=Mdiamond]
    plan [prompt="Plan $goal", class="planning"]
    review [label="Review", max_visits=3]
    exit [shape=Msquare]
    start -> plan -> review -> exit [weight=2]
    review -> plan [condition="outcome=fail", label="Fix"]
}
"""
INVALID = """digraph Broken {
    plan [prompt="p", max_retries=lots]
    lonely [prompt="x"]
    plan -> done [condition="outcome=="]
}
"""


def orchestra(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(ORCHESTRA), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def valid(tmp_path: Path) -> Path:
    path = tmp_path / "release.dot"
    path.write_text(VALID, encoding="utf-8")
    return path


@pytest.fixture
def invalid(tmp_path: Path) -> Path:
    path = tmp_path / "broken.dot"
    path.write_text(INVALID, encoding="utf-8")
    return path


def test_valid_pipeline_exits_0_with_a_summary(valid: Path) -> None:
    result = orchestra("compile", valid)
    assert result.returncode == 0
    assert result.stdout == (
        "synopsis: PLANNING pipeline: 2 LLM stages, 0 tool stages, 0 human gates, 0 parallel fan-outs, "
        f"4 nodes, 4 edges\n{valid}: valid (4 nodes, 4 edges)\n"
    )
    assert result.stderr == ""


def test_warnings_alone_still_exit_0(tmp_path: Path) -> None:
    path = tmp_path / "warn.dot"
    path.write_text(VALID.replace("}\n", "plan [promt=x]\n}\n"), encoding="utf-8")
    result = orchestra("compile", path)
    assert result.returncode == 0
    assert "warning   attribute_known  node plan" in result.stdout
    assert result.stdout.endswith("valid (4 nodes, 4 edges; 1 warning)\n")


def test_errors_exit_1_with_aligned_plain_text_off_a_terminal(invalid: Path) -> None:
    result = orchestra("compile", invalid)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["severity", "rule", "where", "message", "fix"]
    assert lines[1].startswith("error     start_node")
    assert lines[-2].startswith("synopsis: PLANNING pipeline: 3 LLM stages")
    columns = {line.index(line.split()[1]) for line in lines[:-2]}
    assert len(columns) == 1, "the rule column is aligned"
    assert any(
        "condition_syntax" in line and "edge plan -> done" in line and "column 8" in line for line in lines
    )
    assert any("attribute_type" in line and "max_retries='lots'" in line for line in lines)
    assert any(line.startswith("error     orphan_node") for line in lines)
    assert lines[-1] == f"{invalid}: NOT valid (3 nodes, 1 edge; 5 errors, 1 warning)"
    assert "\x1b[" not in result.stdout


def test_json_output_has_the_design_shape(valid: Path) -> None:
    result = orchestra("compile", valid, "--json")
    assert result.returncode == 0 and result.stderr == ""
    document = json.loads(result.stdout)
    assert list(document) == ["valid", "goal", "nodes", "edges", "diagnostics", "synopsis"]
    assert document["valid"] is True and document["goal"] == "Ship v2"
    nodes = {node["id"]: node for node in document["nodes"]}
    assert list(nodes) == ["start", "plan", "review", "exit"]
    assert all(list(node) == ["id", "handler", "attrs"] for node in document["nodes"])
    assert nodes["plan"] == {
        "id": "plan",
        "handler": "codergen",
        "attrs": {"timeout": "15m", "prompt": "Plan Ship v2", "class": "planning", "llm_model": "worker"},
    }
    assert nodes["review"]["attrs"]["llm_model"] == "smart"
    assert nodes["start"]["handler"] == "start" and nodes["exit"]["handler"] == "exit"
    assert document["edges"][0] == {"from": "start", "to": "plan", "attrs": {"weight": "2"}}
    assert document["edges"][3] == {
        "from": "review",
        "to": "plan",
        "attrs": {"condition": "outcome=fail", "label": "Fix"},
    }
    assert document["diagnostics"] == []


def test_json_output_with_errors_exits_1_and_lists_diagnostics(invalid: Path) -> None:
    result = orchestra("compile", "--json", invalid)
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["valid"] is False
    assert all(
        list(d) == ["rule", "severity", "message", "node_id", "edge", "fix"] for d in document["diagnostics"]
    )
    by_rule = {d["rule"]: d for d in document["diagnostics"]}
    assert by_rule["condition_syntax"]["edge"] == ["plan", "done"]
    assert by_rule["condition_syntax"]["severity"] == "error"
    assert by_rule["orphan_node"] == {
        "rule": "orphan_node",
        "severity": "error",
        "message": "is unreachable (orphan): it has no edges, so it never runs",  # the location is node_id, named once
        "node_id": "lonely",
        "edge": None,
        "fix": "connect lonely with edges, or remove it",
    }
    assert by_rule["start_node"]["node_id"] is None


def test_dot_syntax_error_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "syntax.dot"
    path.write_text("digraph G {\n  a -> b\n  b -- c\n}\n", encoding="utf-8")
    message = f"{path}:3: undirected edge '--' is not supported; use '->'"
    for args in (("compile", path), ("compile", path, "--json")):
        result = orchestra(*args)
        assert result.returncode == 2
        assert result.stderr == f"orchestra: error: {message}\n"
    assert orchestra("compile", path).stdout == ""
    document = json.loads(orchestra("compile", path, "--json").stdout)
    assert document == {"error": {"message": message, "exit_code": 2, "file": str(path), "line": 3}}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "file not found"),
        (b"\xff\xfe not text", "not UTF-8 text"),
        (b"", "empty file"),
        (b"graph G { a -- b }", "undirected graphs are not supported"),
        (b"digraph G { a -> b } digraph H { }", "only one graph per file is supported"),
        (b'digraph G { "not an id" }', "is not an identifier"),
    ],
)
def test_unreadable_or_unparsable_files_exit_2_with_one_line(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    path = tmp_path / "p.dot"
    if content is not None:
        path.write_bytes(content)
    result = orchestra("compile", path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"orchestra: error: {path}") and expected in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_directory_is_not_a_pipeline(tmp_path: Path) -> None:
    result = orchestra("compile", tmp_path)
    assert result.returncode == 2 and "is a directory" in result.stderr


def test_missing_config_file_exits_2(valid: Path, tmp_path: Path) -> None:
    result = orchestra("compile", valid, "--config", tmp_path / "nope.yaml")
    assert result.returncode == 2
    assert result.stderr == f"orchestra: error: {tmp_path / 'nope.yaml'}: config file not found\n"


def test_render_svg_and_png(valid: Path, tmp_path: Path) -> None:
    svg, png = tmp_path / "out.svg", tmp_path / "out.png"
    result = orchestra("compile", valid, "--render", svg)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.endswith(f"rendered to {svg}\n")
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text and "Review" in text and "LLM stage (codergen)" in text
    result = orchestra("compile", valid, "--render", png, "--json")
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["valid"] is True
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_still_draws_an_invalid_pipeline_and_exits_1(invalid: Path, tmp_path: Path) -> None:
    out = tmp_path / "broken.svg"
    assert orchestra("compile", invalid, "--render", out).returncode == 1
    assert "lonely" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["out.pdf", "out"])
def test_render_with_a_bad_extension_exits_2_before_doing_anything(
    valid: Path, tmp_path: Path, name: str
) -> None:
    result = orchestra("compile", valid, "--render", tmp_path / name)
    assert result.returncode == 2
    assert result.stdout == "" and "use a .svg or .png file name" in result.stderr
    assert not (tmp_path / name).exists()


def test_render_to_an_unwritable_place_exits_2(valid: Path, tmp_path: Path) -> None:
    result = orchestra("compile", valid, "--render", tmp_path / "no-such-dir" / "x.svg")
    assert result.returncode == 2
    assert result.stdout == ""
    assert (
        result.stderr
        == f"orchestra: error: {tmp_path / 'no-such-dir' / 'x.svg'}: cannot write: No such file or directory\n"
    )


def test_bad_arguments_exit_2_without_traceback(valid: Path) -> None:
    assert orchestra("compile").returncode == 2
    assert orchestra("compile", valid, "--no-such-flag").returncode == 2


def run_in_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [str(ORCHESTRA), *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, **env},
        close_fds=True,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return process.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def test_terminal_gets_a_rich_table_in_colour(invalid: Path) -> None:
    code, output = run_in_terminal(["compile", str(invalid)], {"COLUMNS": "160", "TERM": "xterm-256color"})
    assert code == 1
    assert "┏━" in output and "severity" in output and "condition_syntax" in output
    assert "\x1b[1;31merror" in output
    assert "Traceback" not in output


def test_terminal_output_honours_no_color(invalid: Path) -> None:
    code, output = run_in_terminal(
        ["compile", str(invalid)], {"COLUMNS": "160", "TERM": "xterm-256color", "NO_COLOR": "1"}
    )
    assert code == 1
    assert "┃ severity" in output and "condition_syntax" in output
    assert "\x1b[" not in output
