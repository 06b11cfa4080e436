"""Exceptions of the log store, named after their condition and carrying the Kafka error code to answer with.

Appends fail as a whole with ``LogAppendError`` (nothing of the request is appended); the produce
handler turns ``error_code`` and ``str(e)`` into the partition's result. Reads never raise for an offset
outside the log: they return OFFSET_OUT_OF_RANGE in ``FetchData.error``.
"""

from __future__ import annotations

from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "CorruptIndexError",
    "InvalidOffsetError",
    "LogAppendError",
    "LogClosedError",
    "LogError",
    "OffsetOutOfRangeError",
]


class LogError(Exception):
    """Base of the log store's exceptions; ``error_code`` is what a Kafka response would carry."""

    error_code: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str, error_code: ErrorCode | None = None) -> None:
        super().__init__(message)
        if error_code is not None:
            self.error_code = error_code


class LogAppendError(LogError):
    """An append rejected as a whole: ``LogAppendError(ErrorCode.CORRUPT_MESSAGE, "why")``."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message, ErrorCode(error_code))

    def __repr__(self) -> str:
        return f"LogAppendError({self.error_code.name}, {str(self)!r})"


class InvalidOffsetError(LogAppendError):
    """A follower append whose offsets do not continue the log (they must start at or after its end)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_RECORD, message)


class OffsetOutOfRangeError(LogError):
    """An offset argument outside what the operation allows (DeleteRecords beyond the high watermark)."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE


class LogClosedError(LogAppendError):
    """An append to a log that was closed or deleted (the partition is no longer hosted here)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.KAFKA_STORAGE_ERROR, message)


class CorruptIndexError(LogError):
    """An index file that fails its sanity check (it is rebuilt from the segment, never trusted)."""

    error_code = ErrorCode.KAFKA_STORAGE_ERROR
