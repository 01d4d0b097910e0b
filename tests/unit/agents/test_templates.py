"""Task templates: Jinja2 with the run's context, dotted keys, --set values, strict undefined variables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestra_core.agents.templates import (
    PromptTemplateError,
    check_template,
    render_task,
    template_variables,
)
from orchestra_core.model.prompt_layers import LayerKind, PromptLayer
from orchestra_core.model.settings import ConfigError


def task(text: str, line: int = 3) -> PromptLayer:
    return PromptLayer(LayerKind.TASK, "review", text, source="prompts/tasks/review.yaml", text_line=line)


def test_context_values_and_set_values_render() -> None:
    values = {"pr_diff": "--- a/x.py\n+++ b/x.py", "graph.goal": "Ship it", "outcome": "success"}
    rendered = render_task(task("Diff:\n{{ pr_diff }}\nGoal: {{ graph.goal }} ({{ outcome }})"), template_variables(values))
    assert rendered == "Diff:\n--- a/x.py\n+++ b/x.py\nGoal: Ship it (success)"


def test_dotted_keys_by_exact_name_and_goal() -> None:
    values = {"human.gate.label": "Approve", "human.gate.selected": "A"}
    variables = template_variables(values, goal="Build a CLI")
    text = '{{ ctx["human.gate.label"] }}/{{ human.gate.selected }}/{{ goal }}'
    assert render_task(task(text), variables) == "Approve/A/Build a CLI"


def test_context_goal_wins_over_the_graph_goal() -> None:
    assert render_task(task("{{ goal }}"), template_variables({"goal": "from --set"}, goal="graph")) == "from --set"


def test_node_is_described() -> None:
    variables = template_variables({}, node={"id": "review", "label": "Review", "attrs": {"shape": "box"}})
    assert render_task(task("{{ node.id }}:{{ node.attrs.shape }}"), variables) == "review:box"


def test_plain_key_keeps_its_name_when_dotted_keys_share_the_prefix() -> None:
    variables = template_variables({"a": "plain", "a.b": "dotted"})
    assert render_task(task('{{ a }} {{ ctx["a.b"] }}'), variables) == "plain dotted"


def test_undefined_variable_names_the_task_and_variable() -> None:
    with pytest.raises(PromptTemplateError) as caught:
        render_task(task("Review {{ pr_diff }}"), template_variables({}))
    message = str(caught.value)
    assert "task review (prompts/tasks/review.yaml)" in message
    assert "'pr_diff' is undefined" in message
    assert "--set pr_diff=VALUE" in message


def test_undefined_attribute_is_an_error_too() -> None:
    with pytest.raises(PromptTemplateError, match="no attribute 'nope'"):
        render_task(task("{{ graph.nope }}"), template_variables({"graph.goal": "g"}))


def test_syntax_error_points_into_the_file() -> None:
    with pytest.raises(ConfigError) as caught:
        render_task(task("line one\nline two {{ broken\n", line=4), {})
    assert (caught.value.file, caught.value.line, caught.value.key) == ("prompts/tasks/review.yaml", 5, "task.template")


def test_sandbox_blocks_python_internals() -> None:
    with pytest.raises(PromptTemplateError):
        render_task(task("{{ pr_diff.__class__.__mro__[1].__subclasses__() }}"), template_variables({"pr_diff": "x"}))


def test_values_are_not_rendered_as_templates() -> None:
    variables = template_variables({"pr_diff": "{{ secret }}"})
    assert render_task(task("{{ pr_diff }}"), variables) == "{{ secret }}"


def test_check_template_lists_variables() -> None:
    assert check_template(task("{{ pr_diff }} {{ goal }} {% for f in files %}{{ f }}{% endfor %}")) == {"pr_diff", "goal", "files"}


keys = st.lists(st.from_regex(r"[a-z]{1,3}(\.[a-z]{1,3}){0,3}", fullmatch=True), min_size=1, max_size=8, unique=True)


@settings(max_examples=50)
@given(keys=keys)
def test_every_context_key_is_reachable_by_exact_name_and_plain_keys_by_name(keys: list[str]) -> None:
    values = {key: f"value of {key}" for key in keys}
    variables = template_variables(values)
    text = "|".join(f'{{{{ ctx["{key}"] }}}}' for key in keys)
    assert render_task(task(text), variables) == "|".join(values[key] for key in keys)
    for key in (k for k in keys if "." not in k and k not in RESERVED_NAMES):
        assert variables[key] == values[key]


RESERVED_NAMES = ("ctx", "node")


@pytest.mark.parametrize("name", RESERVED_NAMES)
def test_a_context_key_named_like_a_reserved_name_is_reachable_through_ctx_only(name: str) -> None:
    variables = template_variables({name: "the context's", "other": "x"}, node={"id": "review"})
    assert render_task(task(f'{{{{ ctx["{name}"] }}}}'), variables) == "the context's"
    assert render_task(task("{{ ctx.other }}|{{ node.id }}"), variables) == "x|review"
