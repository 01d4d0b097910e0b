"""Rendering task templates (Jinja2, strict about undefined variables) with the run's context."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from orchestra_core.model.errors import OrchestraError
from orchestra_core.model.prompt_layers import PromptLayer
from orchestra_core.model.settings import ConfigError

if TYPE_CHECKING:
    import jinja2
    import jinja2.sandbox

_UNDEFINED_NAME_RE = re.compile(r"^'([^']+)' is undefined$")


@functools.cache
def _environment() -> jinja2.sandbox.SandboxedEnvironment:
    """The sandboxed Jinja2 environment, made on first use (most runs render no task template)."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    # trim_blocks/lstrip_blocks: a line holding only a {% block tag %} leaves no blank line in the prompt.
    return SandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class PromptTemplateError(OrchestraError):
    """A task template could not be rendered with the run's context (most often an undefined variable)."""


def template_variables(
    values: Mapping[str, Any], *, goal: str = "", node: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The names a task template sees.

    Every context key is a variable (`{{ pr_diff }}`); dotted keys are also reachable as nested names
    (`{{ graph.goal }}`, `{{ human.gate.label }}`) unless a plain key of the same name holds a value;
    `ctx` is the whole context by exact key (`{{ ctx["human.gate.label"] }}`); `goal` is the pipeline goal
    unless the context has a `goal` key; `node` describes the node (id, label, attributes).
    """
    variables = _nest(values)
    if goal and "goal" not in variables:
        variables["goal"] = goal
    variables["ctx"] = dict(values)
    variables["node"] = dict(node or {})
    return variables


def render_task(layer: PromptLayer, variables: Mapping[str, Any]) -> str:
    """Render a task layer's template.

    Raises:
        ConfigError: The template has a syntax error (with the file and line when known).
        PromptTemplateError: Rendering failed, e.g. a variable is undefined; names the task and variable.
    """
    import jinja2

    template = _compile(layer)
    try:
        return template.render(variables)
    except jinja2.UndefinedError as error:
        match = _UNDEFINED_NAME_RE.match(error.message or "")
        name = match.group(1) if match else "NAME"
        raise PromptTemplateError(
            f"{layer.label}: template variable {error.message}; pass it with --set {name}=VALUE "
            "or set it in the context from an earlier stage"
        ) from None
    except Exception as error:  # filters and tests can raise anything; the user sees which template
        raise PromptTemplateError(f"{layer.label}: cannot render: {type(error).__name__}: {error}") from None


def check_template(layer: PromptLayer) -> frozenset[str]:
    """Compile a task template and return the top-level variables it uses.

    Raises:
        ConfigError: The template has a syntax error.
    """
    _compile(layer)
    return _variables_of(layer.text)


def _compile(layer: PromptLayer) -> jinja2.Template:
    import jinja2

    try:
        return _template(layer.text)
    except jinja2.TemplateSyntaxError as error:
        line = layer.text_line + error.lineno - 1 if layer.text_line and error.lineno else None
        raise ConfigError.at(
            f"task template syntax error: {error.message}",
            file=layer.source or None,
            line=line,
            key="task.template",
        ) from None


@functools.lru_cache(maxsize=256)
def _template(text: str) -> jinja2.Template:
    return _environment().from_string(text)


@functools.lru_cache(maxsize=256)
def _variables_of(text: str) -> frozenset[str]:
    import jinja2.meta

    return frozenset(jinja2.meta.find_undeclared_variables(_environment().parse(text)))


def _nest(values: Mapping[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key in sorted(values, key=lambda k: k.count(".")):
        *parents, leaf = key.split(".")
        scope: dict[str, Any] = root
        for part in parents:
            child = scope.get(part, _MISSING)
            if child is _MISSING:
                child = scope[part] = _Namespace()
            elif not isinstance(child, _Namespace):
                break  # a plain value already owns this name; keep it
            scope = child
        else:
            if leaf not in scope:
                scope[leaf] = values[key]
    return root


class _Namespace(dict[str, Any]):
    """A dict made from dotted context keys (kept apart from dict values the context holds)."""


_MISSING = object()
