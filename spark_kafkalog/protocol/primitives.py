"""Reader and writer of the Kafka protocol's primitive types over in-memory buffers (sans-IO).

Wire encodings (all integers big-endian):

| type              | encoding                                                                  |
|-------------------|---------------------------------------------------------------------------|
| int8/16/32/64     | two's complement, 1/2/4/8 bytes                                           |
| uint16/uint32     | unsigned, 2/4 bytes                                                       |
| bool              | 1 byte, 0 = false, anything else = true                                   |
| float64           | IEEE 754 double, 8 bytes                                                  |
| uuid              | 16 raw bytes (all zero = no id)                                           |
| unsigned varint   | LEB128: 7 bits per byte, least significant group first, high bit = more   |
| varint / varlong  | zig-zag ((n << 1) ^ (n >> 31|63)) then unsigned varint, at most 5/10 bytes |
| string            | int16 length + UTF-8 bytes; length -1 = null                              |
| compact string    | unsigned varint (length + 1) + UTF-8 bytes; 0 = null                      |
| bytes             | int32 length + bytes; -1 = null                                           |
| compact bytes     | unsigned varint (length + 1) + bytes; 0 = null                            |
| array             | int32 count + elements; -1 = null                                         |
| compact array     | unsigned varint (count + 1) + elements; 0 = null                          |

``Reader`` never lets a length or count read from the wire drive an allocation larger than the bytes
that remain: a length beyond the end, a negative length, or an element count larger than the remaining
byte count raises ``DecodeError``. Short reads surface as ``struct.error`` or ``IndexError`` from the
fixed-width readers; the codec turns those into ``DecodeError`` at its boundary (``Reader.fail`` builds
the error with the current position).

``Writer`` accumulates bytes in a ``bytearray``. Values that are not bytes-like but have a length (a file
region to be sent with ``sendfile``) can be written as opaque *parts*: ``Writer.parts()`` then returns
the byte chunks and those objects in order, so the network layer can interleave ``send`` and
``sendfile`` without copying the region into memory. A ``SendBuffer`` is such a part too: bytes a request
carries by reference (a produce request's record batches), sent with ``sendmsg`` from where they are.

Neither class is thread-safe; each encode or decode owns its instance.
"""

from __future__ import annotations

import builtins  # the bytes() methods shadow the type in the class bodies
import struct
import uuid as _uuid
from typing import Any

from .exceptions import DecodeError, EncodeError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT16 = struct.Struct(">H")
UINT32 = struct.Struct(">I")
FLOAT64 = struct.Struct(">d")

ZERO_UUID = _uuid.UUID(int=0)


def zigzag_encode(n: int, bits: int = 64) -> int:
    """Map a signed integer to an unsigned one so small magnitudes get short varints."""
    return ((n << 1) ^ (n >> (bits - 1))) & ((1 << bits) - 1)


def zigzag_decode(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def encode_uvarint(n: int) -> bytes:
    """Unsigned LEB128 encoding of ``n`` (``n`` must be >= 0)."""
    if n < 0:
        raise EncodeError(f"unsigned varint cannot hold a negative value ({n})")
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_varint(n: int) -> bytes:
    """Zig-zag varint of a signed 32-bit value."""
    if not -(1 << 31) <= n < (1 << 31):
        raise EncodeError(f"varint out of int32 range ({n})")
    return encode_uvarint(zigzag_encode(n, 32))


def encode_varlong(n: int) -> bytes:
    """Zig-zag varint of a signed 64-bit value."""
    if not -(1 << 63) <= n < (1 << 63):
        raise EncodeError(f"varlong out of int64 range ({n})")
    return encode_uvarint(zigzag_encode(n, 64))


def decode_uvarint(buf: Any, pos: int, max_bytes: int = 10) -> tuple[int, int]:
    """Decode an unsigned varint at ``pos``; return (value, next position).

    Raises ``DecodeError`` when the varint runs past the end of ``buf`` or is longer than ``max_bytes``.
    """
    end = len(buf)
    if pos >= end:
        raise DecodeError("varint runs past the end of the buffer", position=pos)
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    start = pos
    pos += 1
    while True:
        if pos >= end:
            raise DecodeError("varint runs past the end of the buffer", position=start)
        if pos - start >= max_bytes:
            raise DecodeError(f"varint longer than {max_bytes} bytes", position=start)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


class Reader:
    """Sequential reader over a ``memoryview``; ``pos`` is the next byte to read."""

    __slots__ = ("buf", "pos", "end", "where")

    def __init__(self, data: Any, pos: int = 0, end: int | None = None, where: str | None = None) -> None:
        self.buf = data if isinstance(data, memoryview) else memoryview(data)
        if self.buf.format != "B" or self.buf.ndim != 1:
            self.buf = self.buf.cast("B")
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self.where = where

    def fail(self, message: str, position: int | None = None) -> DecodeError:
        return DecodeError(message, where=self.where, position=self.pos if position is None else position)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int) -> None:
        if self.pos + n > self.end:
            raise self.fail(f"need {n} bytes, {self.end - self.pos} left")

    # fixed width -----------------------------------------------------------------------------------
    def int8(self) -> int:
        self._need(1)
        v = INT8.unpack_from(self.buf, self.pos)[0]
        self.pos += 1
        return v

    def int16(self) -> int:
        self._need(2)
        v = INT16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return v

    def int32(self) -> int:
        self._need(4)
        v = INT32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def int64(self) -> int:
        self._need(8)
        v = INT64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return v

    def uint16(self) -> int:
        self._need(2)
        v = UINT16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return v

    def uint32(self) -> int:
        self._need(4)
        v = UINT32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return v

    def float64(self) -> float:
        self._need(8)
        v = FLOAT64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return v

    def bool(self) -> bool:
        self._need(1)
        v = self.buf[self.pos] != 0
        self.pos += 1
        return v

    def uuid(self) -> _uuid.UUID:
        self._need(16)
        v = _uuid.UUID(bytes=bytes(self.buf[self.pos : self.pos + 16]))
        self.pos += 16
        return v

    # varints ---------------------------------------------------------------------------------------
    def uvarint(self) -> int:
        v, pos = decode_uvarint(self.buf, self.pos, 5)
        if pos > self.end:
            raise self.fail("varint runs past the end of the message")
        self.pos = pos
        return v

    def varint(self) -> int:
        v, pos = decode_uvarint(self.buf, self.pos, 5)
        if pos > self.end:
            raise self.fail("varint runs past the end of the message")
        self.pos = pos
        return zigzag_decode(v & 0xFFFFFFFF)

    def varlong(self) -> int:
        v, pos = decode_uvarint(self.buf, self.pos, 10)
        if pos > self.end:
            raise self.fail("varlong runs past the end of the message")
        self.pos = pos
        return zigzag_decode(v & 0xFFFFFFFFFFFFFFFF)

    # lengths ---------------------------------------------------------------------------------------
    def _length(self, n: int, what: str) -> int:
        if n < 0:
            raise self.fail(f"negative {what} length {n}")
        if n > self.end - self.pos:
            raise self.fail(f"{what} length {n} exceeds the {self.end - self.pos} bytes left")
        return n

    def count(self, n: int) -> int:
        """Validate an array element count read from the wire (each element takes at least one byte)."""
        if n < 0:
            raise self.fail(f"negative array count {n}")
        if n > self.end - self.pos:
            raise self.fail(f"array count {n} exceeds the {self.end - self.pos} bytes left")
        return n

    def raw(self, n: int) -> memoryview:
        self._length(n, "raw")
        v = self.buf[self.pos : self.pos + n]
        self.pos += n
        return v

    def _text(self, n: int) -> str:
        start = self.pos
        try:
            v = str(self.buf[start : start + n], "utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"string is not valid UTF-8 ({e.reason})", start) from None
        self.pos = start + n
        return v

    def string(self) -> str:
        n = self.int16()
        return self._text(self._length(n, "string"))

    def nullable_string(self) -> str | None:
        n = self.int16()
        if n == -1:
            return None
        return self._text(self._length(n, "string"))

    def compact_string(self) -> str:
        n = self.uvarint() - 1
        if n == -1:
            raise self.fail("null compact string where a non-null string is required")
        return self._text(self._length(n, "string"))

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint() - 1
        if n == -1:
            return None
        return self._text(self._length(n, "string"))

    def bytes(self) -> builtins.bytes:
        n = self.int32()
        return bytes(self.raw(self._length(n, "bytes")))

    def nullable_bytes(self) -> builtins.bytes | None:
        n = self.int32()
        if n == -1:
            return None
        return bytes(self.raw(self._length(n, "bytes")))

    def compact_bytes(self) -> builtins.bytes:
        n = self.uvarint() - 1
        if n == -1:
            raise self.fail("null compact bytes where non-null bytes are required")
        return bytes(self.raw(self._length(n, "bytes")))

    def compact_nullable_bytes(self) -> builtins.bytes | None:
        n = self.uvarint() - 1
        if n == -1:
            return None
        return bytes(self.raw(self._length(n, "bytes")))

    def records(self) -> memoryview | None:
        """Nullable int32-length record data, returned as a view into the frame (no copy)."""
        n = self.int32()
        if n == -1:
            return None
        return self.raw(self._length(n, "records"))

    def compact_records(self) -> memoryview | None:
        n = self.uvarint() - 1
        if n == -1:
            return None
        return self.raw(self._length(n, "records"))


class SendBuffer:
    """A bytes-like value written into a ``records`` field by reference: ``Writer`` keeps it as an opaque part
    and the transport sends it from the caller's memory (``socket.sendmsg``), so a large record batch is not
    copied into the request. The owner must not change the bytes until the request is sent."""

    __slots__ = ("view",)

    def __init__(self, data: Any) -> None:
        self.view = memoryview(data).cast("B")

    def __len__(self) -> int:
        return self.view.nbytes


class Writer:
    """Append-only encoder; ``getvalue()`` returns bytes, ``parts()`` keeps opaque regions separate."""

    __slots__ = ("buf", "_parts", "_parts_len")

    def __init__(self) -> None:
        self.buf = bytearray()
        self._parts: list[Any] | None = None
        self._parts_len = 0

    def __len__(self) -> int:
        return self._parts_len + len(self.buf)

    def int8(self, v: int) -> None:
        self.buf += INT8.pack(v)

    def int16(self, v: int) -> None:
        self.buf += INT16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += INT32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += INT64.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += UINT16.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += UINT32.pack(v)

    def float64(self, v: float) -> None:
        self.buf += FLOAT64.pack(v)

    def bool(self, v: bool) -> None:
        if not isinstance(v, (bool, int)):
            raise EncodeError(f"expected a bool, got {type(v).__name__}")
        self.buf.append(1 if v else 0)

    def uuid(self, v: _uuid.UUID | None) -> None:
        if v is None:
            v = ZERO_UUID
        if not isinstance(v, _uuid.UUID):
            raise EncodeError(f"expected a uuid.UUID, got {type(v).__name__}")
        self.buf += v.bytes

    def uvarint(self, v: int) -> None:
        if 0 <= v < 0x80:
            self.buf.append(v)
        else:
            self.buf += encode_uvarint(v)

    def varint(self, v: int) -> None:
        self.buf += encode_varint(v)

    def varlong(self, v: int) -> None:
        self.buf += encode_varlong(v)

    def raw(self, data: Any) -> None:
        self.buf += data

    # strings and bytes -----------------------------------------------------------------------------
    @staticmethod
    def _utf8(v: Any) -> bytes:
        if not isinstance(v, str):
            raise EncodeError(f"expected a str, got {type(v).__name__}")
        return v.encode("utf-8")

    def string(self, v: str) -> None:
        if v is None:
            raise EncodeError("null string where a non-null string is required")
        b = self._utf8(v)
        if len(b) > 0x7FFF:
            raise EncodeError(f"string of {len(b)} bytes exceeds the int16 length limit")
        self.buf += INT16.pack(len(b))
        self.buf += b

    def nullable_string(self, v: str | None) -> None:
        if v is None:
            self.buf += INT16.pack(-1)
        else:
            self.string(v)

    def compact_string(self, v: str) -> None:
        if v is None:
            raise EncodeError("null string where a non-null string is required")
        b = self._utf8(v)
        self.uvarint(len(b) + 1)
        self.buf += b

    def compact_nullable_string(self, v: str | None) -> None:
        if v is None:
            self.buf.append(0)
        else:
            self.compact_string(v)

    @staticmethod
    def _check_bytes(v: Any) -> None:
        if not isinstance(v, (bytes, bytearray, memoryview)):
            raise EncodeError(f"expected bytes, got {type(v).__name__}")

    def bytes(self, v: Any) -> None:
        if v is None:
            raise EncodeError("null bytes where non-null bytes are required")
        self._check_bytes(v)
        self.buf += INT32.pack(len(v))
        self.buf += v

    def nullable_bytes(self, v: Any) -> None:
        if v is None:
            self.buf += INT32.pack(-1)
        else:
            self.bytes(v)

    def compact_bytes(self, v: Any) -> None:
        if v is None:
            raise EncodeError("null bytes where non-null bytes are required")
        self._check_bytes(v)
        self.uvarint(len(v) + 1)
        self.buf += v

    def compact_nullable_bytes(self, v: Any) -> None:
        if v is None:
            self.buf.append(0)
        else:
            self.compact_bytes(v)

    # record data: bytes-like, or an opaque region with a length ------------------------------------
    def _records_body(self, v: Any) -> None:
        if isinstance(v, (bytes, bytearray, memoryview)):
            self.buf += v
        else:
            self.part(v)

    def records(self, v: Any) -> None:
        if v is None:
            self.buf += INT32.pack(-1)
            return
        self.buf += INT32.pack(len(v))
        self._records_body(v)

    def compact_records(self, v: Any) -> None:
        if v is None:
            self.buf.append(0)
            return
        self.uvarint(len(v) + 1)
        self._records_body(v)

    def part(self, region: Any) -> None:
        """Append an opaque object with a length (sent by the transport itself, e.g. with sendfile)."""
        if self._parts is None:
            self._parts = []
        if self.buf:
            self._parts.append(bytes(self.buf))
            self._parts_len += len(self.buf)
            self.buf = bytearray()
        self._parts.append(region)
        self._parts_len += len(region)

    def parts(self) -> list[Any]:
        """All chunks in order: ``bytes`` and opaque regions."""
        out = list(self._parts or ())
        if self.buf:
            out.append(bytes(self.buf))
        return out

    def getvalue(self) -> builtins.bytes:
        if self._parts:
            raise EncodeError("message holds opaque regions; use parts()")
        return bytes(self.buf)
