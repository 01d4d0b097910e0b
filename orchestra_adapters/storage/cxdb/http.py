"""CXDB's HTTP API (PROTOCOL.md section 1): GET for contexts and raw turns, PUT for the type bundle."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import requests

from orchestra_core.model.store_errors import BundleConflictError, StoreError, StoreUnavailableError


class HttpStatusError(StoreError):
    """A non-success answer; `message` is CXDB's short error text (`context`, `route`, ...)."""

    def __init__(self, url: str, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"CXDB at {url} answered {status}: {message}")


ENVELOPE = "envelope"  # any view but typed, raw and both: the envelope fields alone (PROTOCOL.md 1.3)


class CxdbHttp:
    """Reads over HTTP GET (the writes go over the binary protocol; CXDB has no POST routes)."""

    def __init__(self, base_url: str, *, connect_timeout_s: float = 2.0, io_timeout_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = (connect_timeout_s, io_timeout_s)
        self._session = requests.Session()

    def contexts(self, limit: int) -> list[dict[str, Any]]:
        """`GET /v1/contexts` items, most recently active first."""
        document = self._get_json("/v1/contexts", {"limit": str(limit)})
        return list(document.get("contexts", []))

    def turns(
        self, context_id: int, *, limit: int, before_turn_id: int | None, view: str = "raw"
    ) -> dict[str, Any]:
        """`GET /v1/contexts/{id}/turns` in the raw view (payload bytes base64; decoded with our bundle), or with
        `view=ENVELOPE` only each turn's ids, depth and declared type (no payload read or sent)."""
        params = {"view": view, "limit": str(limit), "bytes_render": "base64"}
        if before_turn_id is not None:
            params["before_turn_id"] = str(before_turn_id)
        return self._get_json(f"/v1/contexts/{context_id}/turns", params)

    def put_bundle(self, bundle_id: str, body: bytes) -> bool:
        """PUT the bundle bytes as they are; True for 201 (stored), False for 204 (identical one exists).

        Raises:
            BundleConflictError: 422 (same id with other content, or conflicting types).
        """
        response = self._call("PUT", self._bundle_path(bundle_id), data=body, headers=_JSON)
        if response.status_code == 422:
            raise BundleConflictError(
                f"CXDB at {self.base_url} refused bundle {bundle_id}: {_message(response)}"
            )
        self._check(response)
        return response.status_code == 201

    def get_bundle(self, bundle_id: str) -> bytes | None:
        response = self._call("GET", self._bundle_path(bundle_id))
        if response.status_code == 404:
            return None
        self._check(response)
        return response.content

    def close(self) -> None:
        self._session.close()

    def _get_json(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        response = self._call("GET", path, params=params)
        self._check(response)
        try:
            document = response.json()
        except ValueError:
            raise StoreError(f"CXDB at {self.base_url}{path} did not answer JSON") from None
        if not isinstance(document, dict):
            raise StoreError(
                f"CXDB at {self.base_url}{path} answered {type(document).__name__}, not an object"
            )
        return document

    def _call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        url = self.base_url + path
        try:
            return self._session.request(method, url, timeout=self._timeout, **kwargs)
        except requests.RequestException as error:
            raise StoreUnavailableError(f"cannot reach CXDB at {self.base_url}: {_reason(error)}") from None

    def _check(self, response: requests.Response) -> None:
        if response.status_code >= 300:
            raise HttpStatusError(self.base_url, response.status_code, _message(response))

    @staticmethod
    def _bundle_path(bundle_id: str) -> str:
        return f"/v1/registry/bundles/{quote(bundle_id, safe='')}"


_JSON = {"Content-Type": "application/json"}


def _message(response: requests.Response) -> str:
    try:
        error = response.json().get("error", {})
        return str(error.get("message", "")) or response.reason
    except (ValueError, AttributeError):
        return response.text[:200] or str(response.reason)


def _reason(error: requests.RequestException) -> str:
    """The root cause in a few words (`Connection refused`), not urllib3's nested retry report."""
    if isinstance(error, requests.Timeout):
        return "timed out"
    text = str(error.__context__ or error)
    errno_text = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    if errno_text:
        return errno_text.group(1).strip()
    return type(error).__name__ if not text else text.split(": ", 1)[-1][:200]
