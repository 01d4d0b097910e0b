"""BLAKE3-256 in pure Python (from the BLAKE3 paper), for the core's fakes; adapters use the blake3 package.

Slow (a few hundred kilobytes a second) but dependency-free, so the in-memory store hashes blobs exactly as
SQLite and CXDB do.
"""

from __future__ import annotations

import struct

_IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)
_CHUNK_START, _CHUNK_END, _PARENT, _ROOT = 1, 2, 4, 8
_BLOCK_LEN = 64
_CHUNK_LEN = 1024
_MASK = 0xFFFFFFFF


def blake3_hex(data: bytes) -> str:
    """The BLAKE3-256 digest of `data` as 64 lower-case hex digits."""
    chunk_count = max(1, -(-len(data) // _CHUNK_LEN))
    cv, block, _root_chunk_counter, block_len, flags = _subtree(data, 0, chunk_count)
    words = _compress(cv, block, 0, block_len, flags | _ROOT)[:8]
    return struct.pack("<8I", *words).hex()


_Output = tuple[tuple[int, ...], tuple[int, ...], int, int, int]


def _subtree(data: bytes, first_chunk: int, chunk_count: int) -> _Output:
    """The not-yet-finalized output of the subtree over `chunk_count` chunks from `first_chunk`."""
    if chunk_count == 1:
        start = first_chunk * _CHUNK_LEN
        return _chunk(data[start : start + _CHUNK_LEN], first_chunk)
    left_count = 1 << ((chunk_count - 1).bit_length() - 1)
    left = _chaining_value(_subtree(data, first_chunk, left_count))
    right = _chaining_value(_subtree(data, first_chunk + left_count, chunk_count - left_count))
    return _IV, left + right, 0, _BLOCK_LEN, _PARENT


def _chunk(chunk: bytes, counter: int) -> _Output:
    cv: tuple[int, ...] = _IV
    blocks = [chunk[i : i + _BLOCK_LEN] for i in range(0, len(chunk), _BLOCK_LEN)] or [b""]
    for index, block in enumerate(blocks):
        flags = _CHUNK_START if index == 0 else 0
        words = _words(block)
        if index == len(blocks) - 1:
            return cv, words, counter, len(block), flags | _CHUNK_END
        cv = tuple(_compress(cv, words, counter, _BLOCK_LEN, flags)[:8])
    raise AssertionError("unreachable: a chunk has at least one block")


def _chaining_value(output: _Output) -> tuple[int, ...]:
    cv, block, counter, block_len, flags = output
    return tuple(_compress(cv, block, counter, block_len, flags)[:8])


def _words(block: bytes) -> tuple[int, ...]:
    return struct.unpack("<16I", block.ljust(_BLOCK_LEN, b"\0"))


def _compress(
    cv: tuple[int, ...], block: tuple[int, ...], counter: int, block_len: int, flags: int
) -> list[int]:
    state = [*cv, *_IV[:4], counter & _MASK, (counter >> 32) & _MASK, block_len, flags]
    message = list(block)
    for round_index in range(7):
        _round(state, message)
        if round_index < 6:
            message = [message[i] for i in _PERMUTATION]
    for i in range(8):
        state[i] ^= state[i + 8]
        state[i + 8] ^= cv[i]
    return state


def _round(s: list[int], m: list[int]) -> None:
    _g(s, 0, 4, 8, 12, m[0], m[1])
    _g(s, 1, 5, 9, 13, m[2], m[3])
    _g(s, 2, 6, 10, 14, m[4], m[5])
    _g(s, 3, 7, 11, 15, m[6], m[7])
    _g(s, 0, 5, 10, 15, m[8], m[9])
    _g(s, 1, 6, 11, 12, m[10], m[11])
    _g(s, 2, 7, 8, 13, m[12], m[13])
    _g(s, 3, 4, 9, 14, m[14], m[15])


def _g(s: list[int], a: int, b: int, c: int, d: int, x: int, y: int) -> None:
    s[a] = (s[a] + s[b] + x) & _MASK
    s[d] = _rotr(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & _MASK
    s[b] = _rotr(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b] + y) & _MASK
    s[d] = _rotr(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & _MASK
    s[b] = _rotr(s[b] ^ s[c], 7)


def _rotr(value: int, shift: int) -> int:
    return ((value >> shift) | (value << (32 - shift))) & _MASK
