"""Reading a file a user named: regular files only, never blocking, within a size limit, strict UTF-8.

A path on the command line or in a configuration can name a FIFO (which blocks the reader until a writer
appears), a device (`/dev/zero` never ends), a directory or a file of gigabytes; none of them is a
pipeline or a configuration. Every input file goes through `read_text_file`, which refuses them with a
message naming the file instead of hanging or reading without end.
"""

from __future__ import annotations

import os
import stat

from orchestra_core.model.errors import OrchestraError

KIB = 1024
MIB = 1024 * KIB
# The documented limits (docs/configuration.md, "Limits").
MAX_PIPELINE_BYTES = 4 * MIB
MAX_YAML_BYTES = 1 * MIB
MAX_CASSETTE_BYTES = 8 * MIB
MAX_RUN_FILE_BYTES = 256 * MIB  # checkpoint.json and manifest.json of a run directory
_CHUNK = 64 * KIB
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class InputFileError(OrchestraError):
    """A file a user named cannot be used as input; the message names the file (and line, when known).

    Attributes:
        path: The file as named in the message.
        detail: The problem without the location prefix.
        line: 1-based line of the problem (undecodable bytes), when known.
    """

    def __init__(self, detail: str, *, path: str, line: int | None = None) -> None:
        self.path = path
        self.detail = detail
        self.line = line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {detail}")


class InputFileMissing(InputFileError):
    """The file named does not exist."""


def read_text_file(path: str | os.PathLike[str], *, limit: int, display: str | None = None) -> str:
    """The UTF-8 text of a regular file of at most `limit` bytes.

    Args:
        path: The file.
        limit: Most bytes accepted.
        display: How to name the file in messages (default: the path as given).

    Raises:
        InputFileError: The file is missing, not a regular file (directory, FIFO, device, socket), larger
            than `limit`, unreadable, or not UTF-8 (with the byte offset and line).
    """
    name = display or os.fspath(path)
    data = read_bytes(path, limit=limit, display=name)
    return decode_utf8(data, name)


def read_bytes(path: str | os.PathLike[str], *, limit: int, display: str | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (see `read_text_file`).

    Raises:
        InputFileError: As `read_text_file`, except for the UTF-8 check.
    """
    name = display or os.fspath(path)
    check_regular_file(path, display=name)
    try:
        # O_NONBLOCK: were the file swapped for a FIFO after the check, opening it must still not wait.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise _os_error(error, name) from None
    try:
        _require_regular(os.fstat(fd).st_mode, name)
        return _read_limited(fd, limit, name)
    except OSError as error:
        raise _os_error(error, name) from None
    finally:
        os.close(fd)


def check_regular_file(path: str | os.PathLike[str], *, display: str | None = None) -> None:
    """Refuse a path that is missing or is not a regular file, without opening it.

    Raises:
        InputFileError: The path does not exist, cannot be examined, or is a directory, FIFO, device
            or socket.
    """
    name = display or os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        raise _os_error(error, name) from None
    except ValueError as error:  # a NUL byte in the path
        raise InputFileError(f"not a usable path: {error}", path=name) from None
    _require_regular(mode, name)


def decode_utf8(data: bytes, name: str) -> str:
    """`data` as UTF-8 text.

    Raises:
        InputFileError: Bytes that are not UTF-8; the message has the byte offset and the line.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputFileError(
            f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start} ({error.reason})",
            path=name,
            line=line,
        ) from None


def describe_size(size: int) -> str:
    """`4 MiB`, `512 KiB`, `100 bytes`: a limit as the documentation writes it."""
    for unit, factor in (("MiB", MIB), ("KiB", KIB)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"


def _require_regular(mode: int, name: str) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((label for test, label in _KINDS if test(mode)), "not a regular file")
    raise InputFileError(f"is {kind}, not a regular file", path=name)


def _read_limited(fd: int, limit: int, name: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise InputFileError(f"larger than the limit of {describe_size(limit)}", path=name)


def _os_error(error: OSError, name: str) -> InputFileError:
    if isinstance(error, FileNotFoundError):
        return InputFileMissing("file not found", path=name)
    if isinstance(error, IsADirectoryError):
        return InputFileError("is a directory, not a regular file", path=name)
    return InputFileError(f"cannot read: {error.strerror or error}", path=name)
