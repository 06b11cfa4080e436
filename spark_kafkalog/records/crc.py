"""Checksums of the record formats: CRC-32C for v2 batches, CRC-32 for v0/v1 messages.

Both functions accept any buffer (``bytes``, ``bytearray``, ``memoryview``) and return an unsigned
32-bit int. They hold no state and are safe to call from any thread; ``crc32c`` releases the GIL on
large inputs.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

__all__ = ["crc32", "crc32c"]

_crc32c_update = _crc32c.crc32c


def crc32c(data, value: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``, continuing from ``value`` (0 to start)."""
    return _crc32c_update(data, value)


def crc32(data) -> int:
    """CRC-32 (IEEE, as ``java.util.zip.CRC32``) of ``data``."""
    return zlib.crc32(data)
