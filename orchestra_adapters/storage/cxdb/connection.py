"""One TCP connection to CXDB's binary port: HELLO on connect, one request answered at a time."""

from __future__ import annotations

import ipaddress
import json
import os
import socket

from orchestra_adapters.storage.cxdb import protocol
from orchestra_adapters.storage.cxdb.envelope import CLIENT_TAG
from orchestra_adapters.storage.cxdb.protocol import HEADER, MAX_FRAME, MsgType, Request
from orchestra_core.model.store_errors import StoreError, StoreUnavailableError

DEFAULT_PORT = 9009


class ConnectionDropped(Exception):
    """The server closed the connection (or it broke) before answering.

    CXDB drops the connection, without an ERROR frame, when a handler fails (unknown context or turn,
    bad hash, missing blob), so this may mean "rejected" or "network trouble": the caller decides.
    """


class CxdbServerError(StoreError):
    """An ERROR frame (only sent for message types the server does not handle)."""

    def __init__(self, address: str, code: int, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"CXDB at {address} answered error {code}: {detail}")


def parse_address(address: str) -> tuple[str, int]:
    """`host:port` (IPv6 as `[::1]:9009`; the port defaults to 9009).

    Raises:
        StoreUnavailableError: Not an address.
    """
    text = address.strip()
    host, port = text, str(DEFAULT_PORT)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") or port
    elif text.count(":") == 1:
        host, port = text.split(":")
    elif ":" in text and not _is_ipv6(text):
        host = ""
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise StoreUnavailableError(f"CXDB address {address!r} is not host:port")
    return host, int(port)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


class CxdbConnection:
    """A lazily opened connection; `request` reconnects (with a new HELLO) after a drop when asked again."""

    def __init__(self, address: str, *, connect_timeout_s: float = 2.0, io_timeout_s: float = 30.0) -> None:
        self.address = address
        self._host, self._port = parse_address(address)
        self._connect_timeout_s = connect_timeout_s
        self._io_timeout_s = io_timeout_s
        self._socket: socket.socket | None = None
        self._next_id = 0
        self.server_session_id: int | None = None

    def request(self, request: Request) -> bytes:
        """Send one request and return the response payload.

        Raises:
            StoreUnavailableError: The server cannot be reached.
            ConnectionDropped: The connection closed before the answer (the request may have been applied).
            CxdbServerError: The server answered with an ERROR frame.
        """
        connection = self._connected()
        self._next_id += 1
        try:
            connection.sendall(protocol.frame(request, self._next_id))
            length, msg_type, _flags, req_id = HEADER.unpack(self._receive(connection, HEADER.size))
            if length > MAX_FRAME:
                raise ConnectionDropped(f"CXDB at {self.address} sent an oversized frame ({length} bytes)")
            payload = self._receive(connection, length)
        except (OSError, ConnectionDropped) as error:
            self.close()
            raise ConnectionDropped(f"connection to CXDB at {self.address} dropped: {error}") from None
        if req_id != self._next_id:
            self.close()
            raise ConnectionDropped(
                f"CXDB at {self.address} answered request {req_id}, expected {self._next_id}"
            )
        if msg_type == MsgType.ERROR:
            raise CxdbServerError(self.address, *protocol.decode_error(payload))
        return payload

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.close()
            finally:
                self._socket = None

    def _connected(self) -> socket.socket:
        if self._socket is not None:
            return self._socket
        try:
            connection = socket.create_connection((self._host, self._port), timeout=self._connect_timeout_s)
        except OSError as error:
            reason = error.strerror or str(error) or type(error).__name__
            raise StoreUnavailableError(f"cannot reach CXDB at {self.address}: {reason}") from None
        connection.settimeout(self._io_timeout_s)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket = connection
        meta = json.dumps({"client": CLIENT_TAG, "pid": os.getpid()}).encode()
        try:
            self.server_session_id, _version = protocol.decode_hello(
                self.request(protocol.hello(CLIENT_TAG, meta))
            )
        except (ConnectionDropped, protocol.ProtocolError) as error:
            self.close()
            raise StoreUnavailableError(f"CXDB at {self.address} refused the handshake: {error}") from None
        return connection

    @staticmethod
    def _receive(connection: socket.socket, size: int) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        received = 0
        while received < size:
            count = connection.recv_into(view[received:], size - received)
            if count == 0:
                raise ConnectionDropped("the server closed the connection")
            received += count
        return bytes(buffer)
