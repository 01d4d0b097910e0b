"""`orchestra mcp serve`: a stdio MCP server with the workspace's repo-scoped tools."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from orchestra_cli.options import ConfigOption

if TYPE_CHECKING:
    from orchestra_cli.mcp_standalone import StandaloneTools

CONTROL_TOKEN_ENV = "ORCHESTRA_MCP_CONTROL_TOKEN"  # the token of `--control --http`

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
    control: Annotated[
        bool,
        typer.Option(
            "--control",
            help="Serve run control instead (list and compile pipelines, start, follow, answer, cancel and resume "
            "runs); no file tools. See docs/mcp.md.",
        ),
    ] = False,
    http: Annotated[
        bool,
        typer.Option(
            "--http",
            help=f"With --control: streamable HTTP on 127.0.0.1 instead of stdio; every request needs "
            f"`Authorization: Bearer TOKEN` (${CONTROL_TOKEN_ENV}, else a new one printed on stderr).",
        ),
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="With --http: the port (0: any free one).")
    ] = 8766,
    config: ConfigOption = None,
) -> None:
    """Serve the project's tools over MCP on stdin/stdout, for Claude Desktop, an IDE or any MCP client.

    By default: every configured repo's current checkout (the project directory as `project` when
    orchestra.yaml names no repos), with the built-in tools (`<repo>__read-file`, `__write-file`,
    `__edit-file`, `__search-code`, `__list-files`) and the `workspace.tools` commands. Paths are refused
    as in a pipeline run (`..`, absolute paths, `.git`, symlinks leaving the repo). Writes change the
    files in place and are logged on stderr; nothing is committed. Logs go to stderr, never stdout.

    With --control: run control for an agent that drives Orchestra (list and compile pipelines, start runs in
    the background of this process, read their status and turns, answer their human gates, cancel, resume),
    acting only inside the project; no file tools. Over stdio, or with --http on 127.0.0.1 with a bearer
    token. Runs still going when the server exits are cancelled and stay resumable. See docs/mcp.md.
    """
    from orchestra_cli.errors import fail, user_errors

    if control:
        others = {"--session": session, "--node": node, "--pipeline": pipeline, "--repo": repo, "--connect": connect}
        given = [name for name, value in others.items() if value is not None]
        if given:
            raise fail(f"--control serves run control and takes no {given[0]}: it starts runs, it serves no worktree")
        return _serve_control(project, config, http, port)
    if http:
        raise fail("--http serves run control: give it with --control (the repo tools are served over stdio)")
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


def _serve_control(project: Path | None, config: Path | None, http: bool, port: int) -> None:
    import os

    from orchestra_cli.errors import fail, user_errors
    from orchestra_cli.options import require_config_file

    root = project if project is not None else Path.cwd()
    if not root.is_dir():
        raise fail(f"--project {root}: not a directory")
    require_config_file(config)
    # Runs go on in this process: their commands and agents must not inherit the token that drives them.
    given = os.environ.pop(CONTROL_TOKEN_ENV, "").strip()
    token = given if http else ""
    with user_errors():
        from orchestra_cli.mcp_control.control import RunControl

        control = RunControl(root, config)
    try:
        from orchestra_cli.mcp_control import server

        if not http:
            server.serve_stdio(control)
            return
        try:
            listener = server.listen(port)
        except OSError as error:
            raise fail(f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}") from None
        if not token:
            import secrets

            token = secrets.token_urlsafe(32)
            typer.echo(f"orchestra mcp: token {token} (set ${CONTROL_TOKEN_ENV} to choose it)", err=True)
        server.serve_http(control, listener, token)
    finally:
        control.close()


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
