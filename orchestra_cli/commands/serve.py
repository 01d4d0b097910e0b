"""`orchestra serve`: the HTTP API (Attractor 9.5) with SSE event streams, run from a project directory."""

from __future__ import annotations

from typing import Annotated

import typer

from orchestra_cli.options import ConfigOption

TOKEN_ENV = "ORCHESTRA_SERVER_TOKEN"


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.", min=0, max=65535)] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar=TOKEN_ENV, show_envvar=True,
            help="Every request must carry `Authorization: Bearer TOKEN`; required off loopback.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the project's pipelines over HTTP: start runs (each in its own session, several at once),
    follow their events (SSE), answer human gates, cancel, and read every session of the store.

    Runs use the project's orchestra.yaml, store and workspace as `orchestra run` does. It listens on
    127.0.0.1 unless --host says otherwise; another address needs a token (--token or
    ORCHESTRA_SERVER_TOKEN), else it refuses to start (exit 2). See docs/server.md.
    """
    from orchestra_cli.errors import fail, user_errors
    from orchestra_cli.options import require_config_file

    if not token and not is_loopback(host):
        raise fail(
            f"refusing to listen on {host} without a token: anyone who reaches it could run commands; "
            f"give --token or set {TOKEN_ENV} (or listen on 127.0.0.1)"
        )
    require_config_file(config)
    with user_errors():
        import uvicorn

        from orchestra_adapters.server.app import create_app
        from orchestra_adapters.server.service import PipelineService

        service = PipelineService(config=config)
        app = create_app(service, token=token or None)
    typer.echo(f"orchestra serve: project {service.project_root}; listening on http://{host}:{port}", err=True)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    finally:
        service.close()


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or `localhost`)."""
    from orchestra_adapters.server.origin import is_loopback as loopback

    return loopback(host)
