"""`orchestra mcp serve`: a stdio MCP server with the workspace's repo-scoped tools."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestra_cli.options import ConfigOption

if TYPE_CHECKING:
    from orchestra_cli.mcp_standalone import StandaloneTools

app = typer.Typer(
    name="mcp",
    help="Orchestra's repo-scoped tools over MCP (the Model Context Protocol).",
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
)


@app.callback()
def _mcp() -> None:
    """Orchestra's repo-scoped tools over MCP (the Model Context Protocol)."""


def serve(
    project: Annotated[
        Path | None,
        typer.Option("--project", help="The project directory (default: the current directory).", show_default=False),
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Serve this session's worktrees instead of the checkouts.")
    ] = None,
    node: Annotated[
        str | None, typer.Option("--node", help="Offer exactly this node's agent's tools (with --pipeline).")
    ] = None,
    pipeline: Annotated[Path | None, typer.Option("--pipeline", help="The pipeline file --node is in.")] = None,
    repo: Annotated[
        list[str] | None,
        typer.Option("--repo", metavar="NAME=PATH", help="Serve directory PATH as repo NAME (repeatable)."),
    ] = None,
    connect: Annotated[
        str | None,
        typer.Option(
            "--connect",
            metavar="SOCKET",
            help="Forward to a running Orchestra tool host (what a CLI agent node starts; token in "
            "$ORCHESTRA_MCP_TOKEN).",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the project's tools over MCP on stdin/stdout, for Claude Desktop, an IDE or any MCP client.

    By default: every configured repo's current checkout (the project directory as `project` when
    orchestra.yaml names no repos), with the built-in tools (`<repo>__read-file`, `__write-file`,
    `__edit-file`, `__search-code`, `__list-files`) and the `workspace.tools` commands. Paths are refused
    as in a pipeline run (`..`, absolute paths, `.git`, symlinks leaving the repo). Writes change the
    files in place and are logged on stderr; nothing is committed. Logs go to stderr, never stdout.
    """
    from orchestra_cli.errors import fail, user_errors

    if connect is not None:
        if any(value is not None for value in (project, session, node, pipeline, repo, config)):
            raise fail("--connect forwards to a tool host and takes no other option")
        return _proxy(connect)
    from orchestra_cli.options import require_config_file

    require_config_file(config)
    with user_errors():
        from orchestra_cli.mcp_standalone import ServeOptions, parse_repo_option, standalone_tools

        options = ServeOptions(
            project=project if project is not None else Path.cwd(),
            config=config,
            session=session,
            node=node,
            pipeline=pipeline,
            repos=tuple(parse_repo_option(value) for value in repo or ()),
        )
        tools = standalone_tools(options)
    _serve(tools)


def _proxy(address: str) -> None:
    import os

    from orchestra_adapters.mcp.server import TOKEN_ENV
    from orchestra_cli.errors import fail

    token = os.environ.pop(TOKEN_ENV, "")
    if not token:
        raise fail(f"--connect needs the tool host's token in ${TOKEN_ENV}")
    from orchestra_adapters.mcp.__main__ import run_proxy

    raise typer.Exit(run_proxy(address, token))


def _serve(tools: "StandaloneTools") -> None:
    import logging
    import sys

    import anyio

    from orchestra_adapters.mcp.server import serve_stdio

    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="orchestra mcp: %(message)s")
    served = ", ".join(f"{name}={context.root}" for name, context in tools.repos.items())
    print(
        f"orchestra mcp: serving {len(tools.source.list_tools())} tools over stdio; repos: {served}",
        file=sys.stderr,
    )
    try:
        anyio.run(lambda: serve_stdio(tools.source))
    finally:
        tools.close()


app.command("serve")(serve)
