"""`orchestra serve`: the HTTP API (Attractor 9.5) with SSE event streams, run from a project directory."""

from typing import Annotated, Any

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
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url", metavar="URL",
            help="The address browsers reach this server at (behind a proxy, another host name); the CXDB "
            "renderers are registered under it. Default: http://HOST:PORT.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Serve the project's pipelines over HTTP: start runs (each in its own session, several at once),
    follow their events (SSE), answer human gates, cancel, and read every session of the store.

    Runs use the project's orchestra.yaml, store and workspace as `orchestra run` does. It listens on
    127.0.0.1 unless --host says otherwise; another address needs a token (--token or
    ORCHESTRA_SERVER_TOKEN), else it refuses to start (exit 2). With a CXDB store it registers its CXDB UI
    renderers (AgentTurn, Checkpoint, HumanInteraction) at --public-url. See docs/server.md.
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

        base_url = _base_url(public_url, host, port)
        service = PipelineService(config=config, server_url=base_url)
        app = create_app(service, token=token or None)
    typer.echo(f"orchestra serve: project {service.project_root}; listening on http://{host}:{port}", err=True)
    _register_renderers(service, base_url)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    finally:
        service.close()


def _base_url(public_url: str | None, host: str, port: int) -> str:
    """Where browsers reach the server: --public-url (an http(s) URL), else http://HOST:PORT."""
    from urllib.parse import urlsplit

    from orchestra_cli.errors import fail

    if public_url is None:
        name = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://{f'[{name}]' if ':' in name else name}:{port}"
    parts = urlsplit(public_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise fail(f"--public-url {public_url!r}: expected an http(s) URL such as https://orchestra.example.com")
    return public_url.rstrip("/")


def _register_renderers(service: Any, base_url: str) -> None:
    """With a CXDB store, name the server's renderer modules in its type registry (a warning if it fails)."""
    from orchestra_adapters.server.renderers import publish_renderers
    from orchestra_core.model.errors import OrchestraError

    if service.container.settings().storage.backend != "cxdb":
        return
    try:
        publish_renderers(service.store, base_url)
    except OrchestraError as error:
        typer.echo(f"orchestra serve: warning: could not register the CXDB renderers: {error}", err=True)
        return
    typer.echo(f"orchestra serve: CXDB renderers registered at {base_url}/cxdb/renderers/", err=True)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or `localhost`)."""
    from orchestra_adapters.server.origin import is_loopback as loopback

    return loopback(host)
