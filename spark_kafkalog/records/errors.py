"""Exceptions raised by the record-format layer, named after the condition they report."""

from __future__ import annotations

from spark_kafkalog.protocol.exceptions import DecodeError, EncodeError


class CorruptRecordError(DecodeError):
    """Record bytes that fail a check: truncated, bad size, bad magic, bad CRC, undecodable compression."""


class InvalidRecordError(CorruptRecordError):
    """Records that decode but break a rule of the format (Kafka's ``InvalidRecordException``): a compressed
    message inside a wrapper, magic 1 inner offsets that are not 0..n-1, messages of mixed magic."""


class InvalidTimestampError(InvalidRecordError):
    """A timestamp a producer may not send (Kafka's ``InvalidTimestampException``): LogAppendTime set by
    the producer, or a negative timestamp other than -1 (none)."""


class DecompressedSizeLimitError(CorruptRecordError):
    """Compressed data that expands beyond the caller's ``max_size`` (or claims to)."""


class UnsupportedCompressionError(EncodeError):
    """A codec the target format cannot carry, such as ZSTD in a v0/v1 message set."""
