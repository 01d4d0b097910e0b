"""A request's JSON body, read up to a limit, for the server's endpoints that take one."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from orchestra_adapters.server.service import RequestError


async def json_object(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object, read up to `limit` bytes.

    Raises:
        RequestError: Too large (413), not JSON or not an object (400).
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise RequestError(413, f"the body is larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    try:
        document = json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(400, f"the body is not valid JSON: {exc}") from None
    if not isinstance(document, dict):
        raise RequestError(400, "the body must be a JSON object")
    return document
