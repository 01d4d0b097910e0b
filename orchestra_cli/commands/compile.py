"""`orchestra compile`: parse, transform and validate a pipeline; print its diagnostics, optionally draw it."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestra_cli.options import ConfigOption, JsonOption, require_config_file

if TYPE_CHECKING:
    from orchestra_core.pipeline import PreparedPipeline
    from orchestra_core.validation import LintRule

RenderOption = Annotated[
    Path | None,
    typer.Option(
        "--render", help="Also draw the graph to this .svg or .png file (nodes styled by handler type)."
    ),
]


def compile_pipeline(
    pipeline: Annotated[Path, typer.Argument(help="The pipeline's DOT file.")],
    json_output: JsonOption = False,
    render: RenderOption = None,
    config: ConfigOption = None,
) -> None:
    """Parse, transform and validate a pipeline without running it; print its diagnostics.

    Exit status: 0 when there is no error (warnings allowed), 1 when validation finds errors, 2 when the
    file cannot be read or parsed, or the options are wrong.
    """
    from orchestra_cli.errors import EXIT_FAILED, EXIT_OK, user_errors
    from orchestra_core.pipeline import prepare_pipeline

    with user_errors():
        if render is not None:
            from orchestra_adapters.render import render_format

            render_format(render)
            _check_render_target(render)
        rules = _compile_rules(pipeline, config)
        prepared = prepare_pipeline(pipeline, extra_rules=rules)
        if render is not None:
            from orchestra_adapters.render import render_graph

            render_graph(prepared.graph, render, prepared.diagnostics)
    if json_output:
        from orchestra_cli.output import compile_json, print_json

        print_json(compile_json(prepared))
    else:
        _print_report(pipeline, prepared, render)
    raise typer.Exit(EXIT_OK if prepared.valid else EXIT_FAILED)


def _compile_rules(pipeline: Path, config: Path | None) -> "list[LintRule]":
    """Extra lint rules from the composition root (agent, model and tool checks plug in there)."""
    from orchestra_adapters.container import build_container

    require_config_file(config)
    container = build_container(config_path=config, pipeline_path=pipeline)
    return list(container.compile_rules())


def _check_render_target(render: Path) -> None:
    """`--render` replaces a regular file or creates one; a FIFO or device there would block the write."""
    from orchestra_cli.errors import fail

    if render.exists() and not render.is_file():
        raise fail(f"{render}: --render must name a regular file to write (or a new one)", file=str(render))


def _print_report(pipeline: Path, prepared: "PreparedPipeline", render: Path | None) -> None:
    from orchestra_cli.output import count_noun, diagnostics_summary, print_diagnostics
    from orchestra_core.validation.synopsis import pipeline_synopsis

    graph = prepared.graph
    print_diagnostics(prepared.diagnostics)
    print(f"synopsis: {pipeline_synopsis(graph).line()}")
    found = diagnostics_summary(prepared.diagnostics)
    verdict = "valid" if prepared.valid else "NOT valid"
    size = f"{count_noun(len(graph.nodes), 'node')}, {count_noun(len(graph.edges), 'edge')}"
    print(f"{pipeline}: {verdict} ({size}{'; ' + found if found else ''})")
    if render is not None:
        print(f"rendered to {render}")
