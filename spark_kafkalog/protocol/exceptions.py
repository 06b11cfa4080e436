"""Local exceptions of the wire-protocol and record-format layers.

Kafka error codes that travel on the wire are data (see ``errors.py``); these exceptions are raised by
our own code when bytes or values are wrong. Every decode failure is a ``DecodeError`` so callers can
catch one type: a broker disconnects the peer, a client drops the connection.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base class of every exception raised by ``spark_kafkalog.protocol`` and ``spark_kafkalog.records``."""


class DecodeError(ProtocolError):
    """Bytes that cannot be decoded: truncated, a negative or oversized length, bad UTF-8, a bad CRC.

    ``where`` names what was being decoded (for example ``"Produce v9 request"``) and ``position`` is the
    byte offset inside that buffer, when known.
    """

    def __init__(self, message: str, *, where: str | None = None, position: int | None = None) -> None:
        self.reason = message
        self.where = where
        self.position = position
        parts = [message]
        if where:
            parts.append(f"in {where}")
        if position is not None:
            parts.append(f"at byte {position}")
        super().__init__(" ".join(parts))


class EncodeError(ProtocolError):
    """A value that cannot be encoded at the requested version (wrong type, out of range, null where not nullable)."""


class FrameTooLargeError(DecodeError):
    """A size prefix larger than the configured maximum frame size."""


class UnsupportedVersionError(ProtocolError):
    """An API version outside the declared range of an API (or an API key we do not declare)."""
