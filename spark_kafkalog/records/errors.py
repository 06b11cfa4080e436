"""Exceptions raised by the record-format layer, named after the condition they report."""

from __future__ import annotations

from spark_kafkalog.protocol.exceptions import DecodeError, EncodeError


class CorruptRecordError(DecodeError):
    """Record bytes that fail a check: truncated, bad size, bad magic, bad CRC, undecodable compression."""


class DecompressedSizeLimitError(CorruptRecordError):
    """Compressed data that expands beyond the caller's ``max_size`` (or claims to)."""


class UnsupportedCompressionError(EncodeError):
    """A codec the target format cannot carry, such as ZSTD in a v0/v1 message set."""
