"""Notification targets: a webhook (an HTTP POST with `requests`) and a command (the JSON on its standard input).

One `send` is one attempt; retrying is the delivery's business (delivery.py). Nothing a target says about a
failure holds a secret: addresses are shown without their secret parts, and the errors of `requests` (which
quote whole URLs) are reduced to their cause.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from attrs import frozen

from orchestra_adapters.notify.addresses import shown_url
from orchestra_adapters.notify.payloads import SIGNATURE_HEADER, json_body, signature, slack_body
from orchestra_core.model.notifications import Notification

if TYPE_CHECKING:
    import requests

STDERR_TAIL = 200  # characters of a failed command's standard error kept in its reason
_RETRY_STATUSES = frozenset({408, 425, 429})
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"\)\]]+)")
_SSL = re.compile(r"\[SSL: ([A-Z0-9_]+)\]")


@frozen
class Attempt:
    """How one attempt went.

    Attributes:
        delivered: The target took it.
        reason: Why not (`HTTP 500`, `timed out after 10s`, `exit status 1: ...`).
        retry: Whether another attempt may go better (a 404 or a missing program will not).
    """

    delivered: bool
    reason: str = ""
    retry: bool = True


OK = Attempt(True)


class Target(Protocol):
    """Where notifications go; `name` shows it without secrets (`webhook https://host/hooks/…`)."""

    name: str

    def wants(self, event: str) -> bool:
        """Whether it asked for this event."""
        ...

    def send(self, notification: Notification, delivery_id: str) -> Attempt:
        """One attempt at delivering; never raises. `delivery_id` is the same for every attempt of a delivery."""
        ...


class WebhookTarget:
    """POSTs the notification (Orchestra's JSON, or a Slack message) to a URL; signs the body when it has a secret.

    Headers: `Content-Type: application/json`, `X-Orchestra-Event`, `X-Orchestra-Delivery` (the same for every
    attempt of one delivery, so a receiver can drop a repeat) and, with a secret, `X-Orchestra-Signature:
    sha256=<hex HMAC-SHA256 of the exact body bytes>`. Redirects are not followed. 2xx is delivered; 5xx, 408,
    425, 429, a timeout or a failed connection are tried again; any other answer is not.
    """

    def __init__(
        self, url: str, *, events: Sequence[str] = (), secret: str | None = None, slack: bool = False,
        timeout_s: float = 10.0,
    ) -> None:  # fmt: skip
        self.name = f"webhook {shown_url(url)}"
        self._url = url
        self._events = frozenset(events)
        self._secret = secret
        self._slack = slack
        self._timeout_s = timeout_s
        self._session: requests.Session | None = None

    def __repr__(self) -> str:  # never the address itself, nor the secret
        return f"WebhookTarget({self.name!r})"

    def wants(self, event: str) -> bool:
        return not self._events or event in self._events

    def send(self, notification: Notification, delivery_id: str) -> Attempt:
        import requests  # only once something is sent: a run without webhooks never imports it

        body = slack_body(notification) if self._slack else json_body(notification)
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": "orchestra-notify",
            "X-Orchestra-Event": notification.event.value,
            "X-Orchestra-Delivery": delivery_id,
        }
        if self._secret is not None:
            headers[SIGNATURE_HEADER] = signature(self._secret, body)
        if self._session is None:
            self._session = requests.Session()
        try:
            response = self._session.post(
                self._url, data=body, headers=headers, timeout=self._timeout_s, allow_redirects=False
            )
        except requests.Timeout:
            return Attempt(False, f"timed out after {self._timeout_s:g}s")
        except requests.RequestException as error:
            return Attempt(False, _connection_reason(error))
        with response:
            status = response.status_code
        if 200 <= status < 300:
            return OK
        if 300 <= status < 400:
            return Attempt(False, f"HTTP {status} (redirects are not followed)", retry=False)
        return Attempt(False, f"HTTP {status}", retry=status >= 500 or status in _RETRY_STATUSES)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()


def _connection_reason(error: Exception) -> str:
    """The cause of a failed request, without the URL `requests` puts in its messages."""
    text = str(error)
    tls = _SSL.search(text)
    if tls is not None:
        return f"TLS error: {tls.group(1)}"
    cause = _ERRNO.search(text)
    if cause is not None:
        return f"could not connect: {cause.group(1).strip()}"
    return f"could not connect ({type(error).__name__})"


class CommandTarget:
    """Runs a program (argv, no shell) with the notification's JSON on its standard input.

    Its environment is Orchestra's plus `ORCHESTRA_EVENT`, `ORCHESTRA_SESSION_ID`, `ORCHESTRA_PIPELINE`,
    `ORCHESTRA_STATUS` and `ORCHESTRA_DELIVERY`; what a pipeline or an agent wrote (a question, a failure
    reason) is only in the JSON, never in its arguments or environment. It runs in the project root, in a
    process group of its own that is killed at its timeout. Exit status 0 is delivered; 126 and 127 (not a
    program, not found) are not tried again.
    """

    def __init__(
        self, argv: Sequence[str], *, events: Sequence[str] = (), cwd: str, timeout_s: float = 10.0,
        env: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        self.name = f"command {os.path.basename(argv[0]) or argv[0]}"
        self._argv = list(argv)
        self._events = frozenset(events)
        self._cwd = cwd
        self._timeout_s = timeout_s
        self._env = dict(env) if env is not None else None

    def __repr__(self) -> str:
        return f"CommandTarget({self.name!r})"

    def wants(self, event: str) -> bool:
        return not self._events or event in self._events

    def send(self, notification: Notification, delivery_id: str) -> Attempt:
        from orchestra_adapters.process.supervised import spawn_supervised

        env = dict(self._env if self._env is not None else os.environ)
        env.update(
            ORCHESTRA_EVENT=notification.event.value, ORCHESTRA_SESSION_ID=notification.session_id,
            ORCHESTRA_PIPELINE=notification.pipeline, ORCHESTRA_STATUS=notification.status,
            ORCHESTRA_DELIVERY=delivery_id,
        )  # fmt: skip
        try:
            started = spawn_supervised(
                self._argv, cwd=self._cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )  # fmt: skip
        except OSError as error:
            return Attempt(False, f"could not start: {error.strerror or error}", retry=False)
        try:
            return self._wait(started, json_body(notification))
        finally:
            started.release()

    def _wait(self, started: Any, body: bytes) -> Attempt:
        process = started.process
        try:
            _, err = process.communicate(body, timeout=self._timeout_s)
        except subprocess.TimeoutExpired:
            started.kill_group()
            process.communicate()
            return Attempt(False, f"timed out after {self._timeout_s:g}s")
        code = process.returncode
        if code == 0:
            return OK
        tail = " ".join(err.decode("utf-8", "replace").split())[-STDERR_TAIL:]
        return Attempt(False, f"exit status {code}" + (f": {tail}" if tail else ""), retry=code not in (126, 127))
