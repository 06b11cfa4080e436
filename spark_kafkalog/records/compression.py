"""Compression codecs of Kafka record batches and wrapper messages: ids, names, compress, decompress.

| id | codec  | bytes written                                     | bytes accepted                    |
|----|--------|---------------------------------------------------|-----------------------------------|
| 0  | none   | as is                                             | as is                             |
| 1  | gzip   | one gzip member (zlib, deflate level 6 or         | gzip members (or zlib), chained;  |
|    |        | ``level``, mtime 0)                               | trailing non-gzip bytes ignored;  |
|    |        |                                                   | inflated by ISA-L (``isal``)      |
| 2  | snappy | xerial-framed, 32 KiB blocks (as Java)            | xerial-framed or raw              |
| 3  | lz4    | LZ4 frame; magic 0 with Kafka's broken HC byte;   | same, chosen by magic             |
|    |        | LZ4's fast compressor, or LZ4 HC at ``level``     |                                   |
| 4  | zstd   | one zstd frame, level 3 or ``level``, content     | zstd frames, chained (magic 2)    |
|    |        | size recorded                                     |                                   |

``level`` is Kafka's ``compression.<codec>.level`` (KIP-390, checked by ``client.config``): gzip 1-9 (zlib's
levels), lz4 1-17 (LZ4 HC at that level, capped at LZ4 HC's maximum 12), zstd -131072..22; ``None`` (and
gzip's -1) picks the codec's default above. snappy has no levels.

Output is bounded by ``max_size`` (``DEFAULT_MAX_DECOMPRESSED_SIZE`` unless given): decompressors grow
their output with the bytes actually produced and stop past the limit; a size claimed by a header is
used only when it is within the limit (one zstd frame with a content size) or checked against the
codec's largest possible expansion first (raw snappy). Corrupt input raises ``CorruptRecordError``;
going over the limit raises its subclass ``DecompressedSizeLimitError``. Functions are
thread-safe (zstd compression keeps one compressor per thread).
"""

from __future__ import annotations

import threading
import zlib
from enum import IntEnum

import zstandard
from isal import isal_zlib

from spark_kafkalog.records.errors import (
    CorruptRecordError,
    DecompressedSizeLimitError,
    UnsupportedCompressionError,
)
from spark_kafkalog.records.kafka_lz4 import lz4_compress, lz4_decompress
from spark_kafkalog.records.snappy_framing import snappy_compress, snappy_decompress

__all__ = ["Compression", "compress", "decompress", "DEFAULT_MAX_DECOMPRESSED_SIZE"]

DEFAULT_MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024
"""Largest decompressed payload accepted by default (Kafka batches are far smaller in practice)."""

_GZIP_LEVEL = 6
_ZSTD_LEVEL = 3
# zstd's own default decoder window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27): level-22 producers need it.
_ZSTD_MAX_WINDOW = 1 << 27
# Compressed bytes fed per zstd call: small enough that even RLE blocks (about 32768:1) overshoot the
# limit by a bounded amount, large enough to keep per-call overhead negligible.
_ZSTD_INPUT_STEP = 32 * 1024
_ZSTD_OUTPUT_STEP = 1 << 20


_local = threading.local()


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    """This thread's compressor for ``level``: a ``ZstdCompressor`` is not thread-safe, and making one per
    call costs a context allocation per batch."""
    compressors = getattr(_local, "zstd", None)
    if compressors is None:
        compressors = _local.zstd = {}
    compressor = compressors.get(level)
    if compressor is None:
        compressor = compressors[level] = zstandard.ZstdCompressor(level=level)
    return compressor


class Compression(IntEnum):
    """Codec id stored in bits 0-2 of batch (v2) or message (v0/v1) attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def from_name(cls, name: str) -> Compression:
        """Codec for a ``compression.type`` value: none/uncompressed, gzip, snappy, lz4, zstd."""
        try:
            return _BY_NAME[name.strip().lower()]
        except (KeyError, AttributeError):
            raise ValueError(
                f"unknown compression type {name!r}; expected one of none, gzip, snappy, lz4, zstd"
            ) from None


_BY_NAME = {
    "none": Compression.NONE,
    "uncompressed": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


def compress(codec: int, data, *, magic: int = 2, level: int | None = None) -> bytes:
    """``data`` compressed with ``codec`` as Kafka writes it in a batch (magic 2) or message (0, 1), at
    ``level`` (``None``: the codec's default; see the module docstring; ignored for snappy).

    Raises ``UnsupportedCompressionError`` for ZSTD with magic 0 or 1, ``ValueError`` for an unknown id.
    """
    codec = Compression(codec)
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        deflate = zlib.compressobj(_GZIP_LEVEL if level is None or level == -1 else level, zlib.DEFLATED, 31)
        return deflate.compress(data) + deflate.flush()
    if codec is Compression.SNAPPY:
        return snappy_compress(data)
    if codec is Compression.LZ4:
        return lz4_compress(data, magic=magic, level=level)
    if magic < 2:
        raise UnsupportedCompressionError(f"compression codec zstd cannot be used with magic {magic}")
    return _zstd_compressor(_ZSTD_LEVEL if level is None else level).compress(data)


def decompress(codec: int, data, *, magic: int = 2, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> bytes:
    """Uncompressed bytes of ``data`` written with ``codec`` (``magic`` selects the LZ4 framing)."""
    if codec == 0:
        return bytes(data)
    if codec == 1:
        return _gzip_decompress(data, max_size)
    if codec == 2:
        return snappy_decompress(data, max_size=max_size)
    if codec == 3:
        return lz4_decompress(data, magic=magic, max_size=max_size)
    if codec == 4:
        return _zstd_decompress(data, max_size)
    raise CorruptRecordError(f"unknown compression codec id {codec}")


def _gzip_decompress(data, max_size: int) -> bytes:
    pieces = []
    total = 0
    remaining: bytes | memoryview = memoryview(data)
    while True:
        inflate = isal_zlib.decompressobj(47)  # 32 + 15: gzip or zlib header, detected
        try:
            chunk = inflate.decompress(remaining, max_size + 1 - total)
            while True:
                pieces.append(chunk)
                total += len(chunk)
                if total > max_size:
                    raise DecompressedSizeLimitError(f"gzip data expands beyond {max_size} bytes")
                if not inflate.unconsumed_tail:
                    break
                chunk = inflate.decompress(inflate.unconsumed_tail, max_size + 1 - total)
        except isal_zlib.error as exc:  # type: ignore[misc]  # isal's stubs do not type ``error`` as an exception
            raise CorruptRecordError(f"bad gzip data: {exc}") from None
        if not inflate.eof:
            raise CorruptRecordError("truncated gzip data")
        remaining = inflate.unused_data
        if remaining[:2] != b"\x1f\x8b":  # no further member: trailing bytes are ignored, as Java does
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _zstd_decompress(data, max_size: int) -> bytes:
    view = memoryview(data)
    dctx = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)
    try:
        claimed = zstandard.frame_content_size(view)
    except zstandard.ZstdError as exc:
        raise CorruptRecordError(f"bad zstd frame header: {exc}") from None
    if claimed > max_size:
        raise DecompressedSizeLimitError(f"zstd frame claims {claimed} bytes, over the limit {max_size}")
    if claimed >= 0:
        # One frame with a recorded size (librdkafka, kafka-python, ours): one call, one allocation of
        # at most max_size. Anything else (extra frames, errors) takes the streaming path below.
        try:
            return dctx.decompress(view, allow_extra_data=False)
        except zstandard.ZstdError:
            pass
    pieces = []
    total = 0
    pos = 0
    end = len(view)
    try:
        while pos < end:  # one zstd frame per iteration
            frame = dctx.decompressobj(write_size=_ZSTD_OUTPUT_STEP)
            while not frame.eof:
                if pos >= end:
                    raise CorruptRecordError("truncated zstd frame")
                step = view[pos : pos + _ZSTD_INPUT_STEP]
                chunk = frame.decompress(step)
                pos += len(step)
                if chunk:
                    pieces.append(chunk)
                    total += len(chunk)
                    if total > max_size:
                        raise DecompressedSizeLimitError(f"zstd data expands beyond {max_size} bytes")
            pos -= len(frame.unused_data)
    except zstandard.ZstdError as exc:
        raise CorruptRecordError(f"bad zstd data: {exc}") from None
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)
