"""CXDB UI renderers served by `orchestra serve`: the ES modules (`/cxdb/renderers/<file>.js`), the bundle that
names them for the AgentTurn, Checkpoint and HumanInteraction turn types, and the commit diffs they link to
(`/repos/<repo>/commits/<sha>`).

The CXDB UI imports a renderer by the `esm_url` of its type in the registry (`GET /v1/registry/renderers`)
and calls its export as a React component with the turn's typed data. The modules are public code with no
data in them, served to any origin (the UI is another site) and without the token; the diffs are data and
need the token like every other endpoint (a browser's cookie from the web view works).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from orchestra_core.session.catalog import AGENT_TURN, CHECKPOINT, HUMAN_INTERACTION

RENDERERS_PATH = "/cxdb/renderers"
RENDERER_FILES = {
    AGENT_TURN.type_id: "agent-turn.js",
    CHECKPOINT.type_id: "checkpoint.js",
    HUMAN_INTERACTION.type_id: "human-interaction.js",
}
_MODULES = frozenset({*RENDERER_FILES.values(), "common.js"})
_SHA = re.compile(r"^[0-9a-f]{4,64}$")
_MAX_DIFF_CHARS = 2_000_000


def routes() -> list[Route]:
    return [
        Route(RENDERERS_PATH + "/{name}", _module, methods=["GET"]),
        Route("/repos/{repo}/commits/{sha}", _commit, methods=["GET"]),
    ]


def is_public(path: str) -> bool:
    """Whether a request path is a renderer module (served without the token: code, no data)."""
    prefix = RENDERERS_PATH + "/"
    return path.startswith(prefix) and path[len(prefix):] in _MODULES


def renderer_specs(base_url: str) -> dict[str, dict[str, str]]:
    """Each turn type's renderer spec for a server reachable at `base_url` (`http://127.0.0.1:8765`)."""
    base = base_url.rstrip("/")
    return {
        type_id: {"esm_url": f"{base}{RENDERERS_PATH}/{name}", "component": "default"}
        for type_id, name in RENDERER_FILES.items()
    }


def publish_renderers(store: Any, base_url: str) -> bool:
    """Register the renderers with the store's type registry; True when the bundle was new there.

    CXDB keeps the first renderer a type version gets, so the address of the first server that registered
    stays (serve under a stable address, see `orchestra serve --public-url`).
    """
    from orchestra_core.session.bundle import bundle_with_renderers

    published: bool = store.publish_bundle(bundle_with_renderers(renderer_specs(base_url)))
    return published


async def _module(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in _MODULES:
        return Response('{"error": "no such renderer"}', status_code=404, media_type="application/json")
    body = resources.files("orchestra_adapters.server").joinpath("web", "renderers", name).read_bytes()
    headers = {
        "Access-Control-Allow-Origin": "*",  # imported by the CXDB UI, another origin
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
    }
    return Response(body, media_type="text/javascript; charset=utf-8", headers=headers)


async def _commit(request: Request) -> Response:
    from starlette.concurrency import run_in_threadpool

    repo, sha = request.path_params["repo"], request.path_params["sha"]
    status, text = await run_in_threadpool(commit_text, request.app.state.service, repo, sha)
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
               "Content-Security-Policy": "default-src 'none'"}
    return Response(text, status_code=status, media_type="text/plain; charset=utf-8", headers=headers)


def commit_text(service: Any, repo: str, sha: str) -> tuple[int, str]:
    """`(status, text)`: the commit in a workspace repo as `git show --stat --patch` would read (author, date,
    message, files, diff against its first parent); 404 for an unknown repo or commit, 400 for a bad SHA."""
    from orchestra_core.workspace.setup import configured_path

    if not _SHA.match(sha):
        return 400, f"{sha!r} is not a commit SHA (4 to 64 lower-case hex digits)\n"
    container = service.container
    settings = container.settings()
    repo_settings = settings.workspace.repos.get(repo)
    if repo_settings is None:
        return 404, f"no workspace repo {repo!r} (workspace.repos in orchestra.yaml)\n"
    git, root = container.git(), configured_path(repo_settings, settings.base_dir)
    full = git.resolve_commit(root, sha) if root.is_dir() else None
    if full is None:
        return 404, f"no commit {sha} in {repo}\n"
    [entry] = git.log(root, full, max_count=1)
    changes = git.changed_files(root, full)
    parent = entry.parents[0] if entry.parents else _EMPTY_TREE
    diff = git.diff(root, parent, full)
    lines = [
        f"commit {full}  ({repo})",
        f"Author: {entry.author_name} <{entry.author_email}>",
        f"Date:   {entry.authored_at}",
        "",
        *(f"    {line}" for line in entry.message.rstrip("\n").split("\n")),
        "",
        *(f" {change.status} {change.path}" for change in changes),
        "",
        diff if len(diff) <= _MAX_DIFF_CHARS else diff[:_MAX_DIFF_CHARS] + "\n... (diff cut)\n",
    ]
    return 200, "\n".join(lines)


_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
