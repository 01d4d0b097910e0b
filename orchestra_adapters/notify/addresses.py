"""Webhook addresses: which ones are accepted, and how one may be shown (its secret parts left out)."""

from __future__ import annotations

from urllib.parse import urlsplit

EXAMPLE = "https://hooks.example.com/orchestra"


def webhook_problem(url: str) -> str | None:
    """What is wrong with a webhook address (None: an http(s) URL with a host)."""
    shown = shown_url(url)
    if any(ord(character) < 33 or ord(character) == 127 for character in url):
        return f"a webhook address has no spaces or control characters (got {shown!r})"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port that is not a number in range)
    except ValueError as error:
        return f"not a valid URL ({error}): {shown!r}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"expected an http(s) URL such as {EXAMPLE}, got {shown!r}"
    if not parts.hostname:
        return f"expected an http(s) URL with a host, such as {EXAMPLE}, got {shown!r}"
    return None


def shown_url(url: str) -> str:
    """The address as messages and records show it: scheme, host, port and the first path segment; any user
    and password, the rest of the path and the query are left out (a Slack or Discord webhook's path, a
    `?token=` query, are its secret): `https://hooks.slack.com/services/T0/B0/XyZ` -> `https://hooks.slack.com/services/…`."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "(an unreadable address)"
    authority = parts.netloc.rpartition("@")[2]  # without any user and password
    segments = [segment for segment in parts.path.split("/") if segment]
    path = f"/{segments[0]}" if segments else ""
    more = "/…" if len(segments) > 1 else ("?…" if parts.query else "")
    scheme = f"{parts.scheme}://" if parts.scheme else ""
    return f"{scheme}{authority}{path}{more}"
