"""The fleet's broker URL: from orchestra.yaml or the environment, shown without its password, checked quickly."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from orchestra_core.model.settings import DispatchSettings
from orchestra_core.ports.dispatcher import DispatchError

BROKER_TIMEOUT_S = 3.0  # an unreachable broker fails within this, naming its address


def configured_broker(settings: DispatchSettings) -> str:
    """The broker URL `dispatch.broker` gives, or the value of the variable `dispatch.broker_env` names.

    Raises:
        DispatchError: Neither is set (no fleet configured), both are, the variable is unset, or the URL is not
            a redis one; the message names the key.
    """
    if settings.broker and settings.broker_env:
        raise DispatchError("dispatch: give dispatch.broker or dispatch.broker_env, not both")
    url = settings.broker
    if settings.broker_env:
        url = os.environ.get(settings.broker_env, "").strip()
        if not url:
            raise DispatchError(f"dispatch.broker_env: the environment variable {settings.broker_env} is not set")
    if not url:
        raise DispatchError(
            "dispatch.broker: no fleet is configured; set dispatch.broker (redis://host:6379/0) in orchestra.yaml"
        )
    if urlsplit(url).scheme not in ("redis", "rediss"):
        raise DispatchError(f"dispatch.broker: {display_url(url)} is not a redis:// or rediss:// URL")
    return url


def display_url(url: str) -> str:
    """The URL as messages show it: its password (or a token given as its user) is `***`."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "(unparsable URL)"
    if parts.password is None and parts.username is None:
        return url
    user = "***" if parts.password is None else (parts.username or "")
    secret = ":***" if parts.password is not None else ""
    port = f":{parts.port}" if parts.port else ""
    netloc = f"{user}{secret}@{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_broker(url: str, timeout_s: float = BROKER_TIMEOUT_S) -> None:
    """Fail within `timeout_s` when the broker does not answer a PING.

    Raises:
        DispatchError: Unreachable, refused or not a Redis server (named, without its password).
    """
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        client.ping()
    except redis.RedisError as error:
        detail = " ".join(str(error).split()) or type(error).__name__
        raise DispatchError(f"dispatch.broker {display_url(url)} is unreachable: {detail}") from None
    finally:
        client.close()
