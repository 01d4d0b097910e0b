"""The CLI on mutated inputs: no traceback, a known exit code, and a JSON document whenever --json was given.

Valid pipelines, conditions, model stylesheets, orchestra.yaml files and cassettes are mutated (spliced
with tokens of their own language, spans deleted or repeated) and run through `orchestra compile --json`
and, where a run is cheap, `orchestra run --json`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.graph import to_dot
from tests.property.cli import assert_well_behaved, run_cli
from tests.property.strategies import CONDITION_LIKE, DOT_ALPHABET, STYLESHEET_LIKE, graphs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PIPELINE = """digraph G {
    graph [goal="Ship it", model_stylesheet="%(stylesheet)s"]
    start  [shape=Mdiamond]
    exit   [shape=Msquare]
    plan   [prompt="Plan for $goal", class="code"]
    review [prompt="Review", agent=reviewer]
    start -> plan -> review
    review -> exit [condition="%(condition)s"]
    review -> plan [condition="outcome=fail", label="Again"]
}
"""
STYLESHEETS = [
    "* { llm_model: worker; }",
    ".code { llm_model: smart; reasoning_effort: high; } #review { llm_provider: openai; }",
    "box { llm_model: cheap } * { reasoning_effort: low; }",
]
CONDITIONS = ["outcome=success", "outcome!=fail && context.ready=true", "context.tests.passed", "preferred_label=Ship"]
ORCHESTRA_YAML = """providers:
  default: openai
  openai:
    models: {smart: gpt-4o, worker: gpt-4o-mini, cheap: gpt-4o-mini}
    max_tokens: 4096
backend: simulate
defaults: &defaults
  role: engineer
agents:
  reviewer:
    role: reviewer
    task: review
    tools: [read-file, grep]
    model: smart
prompts: [prompts, ~/.orchestra/prompts]
"""
YAML_TOKENS = [
    "&a ", "*a", "<<: *a", "[", "]", "{", "}", ": ", "- ", "\n", "\n  ", "\t", "!!str ", "!!binary ", "!!python/object ",
    "? ", "|\n", ">-\n", "'", '"', "#", "%YAML 1.2\n", "---\n", "...\n", '"\\ud800"', "~", "1e9999", "9" * 5000,
    "2024-13-45", ",", "&b [*a, *a, *a]", "agents:", "workspace:", "x", "é", "\x00", "\ufeff",
]
CASSETTE = """nodes:
  plan:
    - content: "Reading first."
      tool_calls:
        - name: "project:read-file"
          args: {path: notes.txt}
    - content: "Done."
      tool_calls:
        - name: report_outcome
          args: {status: success, notes: "fine"}
  review:
    - "Looks right."
commit_messages:
  - "Add notes"
default: "Done."
"""
SCRIPTED_CONFIG = """providers:
  default: scripted
  scripted:
    cassette: cassette.yaml
backend: langgraph
"""
RUN_PIPELINE = """digraph G {
    start [shape=Mdiamond]
    exit  [shape=Msquare]
    plan  [prompt="Plan"]
    review [prompt="Review"]
    start -> plan -> review -> exit
}
"""


@st.composite
def mutated(draw: st.DrawFn, text: str, tokens: st.SearchStrategy[str]) -> str:
    """`text` after one to three edits: a token spliced in (replacing up to 8 characters), a span deleted,
    or a span repeated (long chains, deep nesting, many aliases)."""
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 8)))
        edit = draw(st.sampled_from(["splice", "delete", "repeat"]))
        if edit == "splice":
            text = text[:start] + draw(tokens) + text[end:]
        elif edit == "delete":
            text = text[:start] + text[end:]
        else:
            text = text[:start] + text[start:end] * draw(st.integers(2, 200)) + text[end:]
    return text


def dot_string(value: str) -> str:
    """`value` inside a DOT double-quoted string."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


@contextmanager
def project(files: dict[str, str | bytes]) -> Iterator[Path]:
    """A fresh project directory holding `files` (a new one per example; tmp_path is per test)."""
    with tempfile.TemporaryDirectory(prefix="orchestra-prop-") as directory:
        root = Path(directory)
        for name, content in files.items():
            data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
            (root / name).write_bytes(data)
        yield root


def compile_well_behaved(root: Path, *extra: str) -> None:
    result = run_cli("compile", "pipeline.dot", "--json", *extra, cwd=root)
    assert_well_behaved(result, json_output=True)


VALID_DOT = st.one_of(
    st.just((EXAMPLES / "hello.dot").read_text(encoding="utf-8")),
    st.just((EXAMPLES / "quickstart" / "pipeline.dot").read_text(encoding="utf-8")),
    graphs().map(to_dot),
)
DOT_TOKENS = st.one_of(DOT_ALPHABET, st.sampled_from(["\xff", "\ufdd0", "a -> b -> c", "subgraph {", "<b>", "\x00"]))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_compile_on_mutated_dot(data: st.DataObject) -> None:
    text = data.draw(VALID_DOT.flatmap(lambda valid: mutated(valid, DOT_TOKENS)))
    with project({"pipeline.dot": text}) as root:
        compile_well_behaved(root)


def pipeline_text(condition: str, stylesheet: str) -> str:
    return PIPELINE % {"condition": dot_string(condition), "stylesheet": dot_string(stylesheet)}


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(CONDITIONS).flatmap(lambda valid: mutated(valid, CONDITION_LIKE)))
def test_compile_and_run_on_mutated_conditions(condition: str) -> None:
    with project({"pipeline.dot": pipeline_text(condition, STYLESHEETS[0])}) as root:
        compile_well_behaved(root)
        result = run_cli(
            "run", "pipeline.dot", "--backend", "simulate", "--json", "--quiet", "--max-visits", "20", cwd=root
        )
        assert_well_behaved(result, json_output=True)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(STYLESHEETS).flatmap(lambda valid: mutated(valid, STYLESHEET_LIKE)))
def test_compile_on_mutated_stylesheets(stylesheet: str) -> None:
    with project({"pipeline.dot": pipeline_text(CONDITIONS[0], stylesheet)}) as root:
        compile_well_behaved(root)


@settings(max_examples=40, deadline=None)
@given(mutated(ORCHESTRA_YAML, st.sampled_from(YAML_TOKENS)))
def test_compile_on_mutated_orchestra_yaml(config: str) -> None:
    files: dict[str, str | bytes] = {"pipeline.dot": pipeline_text(CONDITIONS[0], STYLESHEETS[0]), "orchestra.yaml": config}
    with project(files) as root:
        compile_well_behaved(root)
        compile_well_behaved(root, "--config", "orchestra.yaml")


@settings(max_examples=25, deadline=None)
@given(mutated(CASSETTE, st.sampled_from(YAML_TOKENS)))
def test_run_on_mutated_cassettes(cassette: str) -> None:
    files: dict[str, str | bytes] = {
        "pipeline.dot": RUN_PIPELINE, "orchestra.yaml": SCRIPTED_CONFIG, "cassette.yaml": cassette,
        "notes.txt": "notes\n",
    }
    with project(files) as root:
        result = run_cli("run", "pipeline.dot", "--json", "--quiet", "--max-visits", "20", cwd=root)
        assert_well_behaved(result, json_output=True)


GATE_PIPELINE = """digraph G {
    start  [shape=Mdiamond]
    exit   [shape=Msquare]
    review [shape=hexagon, label="Ship it?"]
    start -> review
    review -> exit [label="[A] Approve"]
    review -> start [label="[R] Reject"]
}
"""
ANSWERS = "review: Approve\ndefault: A\n"
TOOLS_CONFIG = """workspace:
  tools:
    project:
      grep:
        command: git grep -n -- {pattern} {path}
        parameters:
          pattern: {description: what to find}
          path: {default: .}
"""
TOOL_TOKENS = ['"', "'", "\\\\", "{pattern}", "{path}", "{other}", "$(", "`", ";", "&&", " -- ", "|", "\n", "#"]


@settings(max_examples=25, deadline=None)
@given(mutated(ANSWERS, st.sampled_from(YAML_TOKENS)))
def test_run_on_mutated_answers_files(answers: str) -> None:
    with project({"pipeline.dot": GATE_PIPELINE, "answers.yaml": answers}) as root:
        result = run_cli(
            "run", "pipeline.dot", "--backend", "simulate", "--answers", "answers.yaml", "--json", "--quiet",
            "--max-visits", "5", cwd=root,
        )  # fmt: skip
        assert_well_behaved(result, json_output=True)


@settings(max_examples=30, deadline=None)
@given(mutated(TOOLS_CONFIG, st.one_of(st.sampled_from(TOOL_TOKENS), st.sampled_from(YAML_TOKENS))))
def test_compile_on_mutated_project_tool_commands(config: str) -> None:
    files: dict[str, str | bytes] = {"pipeline.dot": RUN_PIPELINE, "orchestra.yaml": config}
    with project(files) as root:
        compile_well_behaved(root)
