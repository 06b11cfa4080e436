"""Size-prefixed framing of a Kafka byte stream (sans-IO).

Every request and response is ``int32 size`` followed by ``size`` bytes. ``FrameDecoder`` is fed
arbitrary chunks of a stream and hands back complete frame payloads; a size that is negative or larger
than ``max_frame_size`` raises ``FrameTooLargeError`` before any byte of that frame is buffered, so a
peer cannot make us allocate more than the limit. One decoder per connection; not thread-safe.
"""

from __future__ import annotations

from typing import Any

from .exceptions import DecodeError, FrameTooLargeError
from .primitives import INT32

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes default (104857600)


def frame(payload: Any) -> bytes:
    """``payload`` with its int32 size prefix."""
    return INT32.pack(len(payload)) + bytes(payload)


class FrameDecoder:
    """Incremental frame splitter; ``feed`` returns the payloads completed by the new bytes."""

    __slots__ = ("max_frame_size", "_buf", "_need")

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._need = -1  # payload size of the frame being assembled, -1 while reading the size

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame."""
        return len(self._buf)

    def next_size(self) -> int:
        """Bytes still needed to complete the next frame (4 when nothing is buffered)."""
        if self._need < 0:
            return 4 - len(self._buf)
        return self._need - len(self._buf)

    def take_partial_frame(self, min_size: int) -> tuple[bytearray, int] | None:
        """Hand a large, incomplete frame to the caller, so the rest can be received straight into its buffer.

        When the next frame's size is known, is at least ``min_size`` and the frame is incomplete,
        returns ``(head, size)``: ``head`` is the payload received so far (``len(head) < size``). The
        decoder then expects the next frame's size prefix; the caller must receive the other
        ``size - len(head)`` payload bytes from the stream before feeding more. Otherwise returns None.
        Nothing is allocated for the announced size: a size prefix alone costs no memory.
        """
        if self._need < 0 or self._need < min_size or len(self._buf) >= self._need:
            return None
        size = self._need
        head = self._buf
        self._buf = bytearray()
        self._need = -1
        return head, size

    def feed(self, data: Any) -> list[bytearray]:
        self._buf += data
        out: list[bytearray] = []
        buf = self._buf
        pos = 0
        end = len(buf)
        while True:
            if self._need < 0:
                if end - pos < 4:
                    break
                size = INT32.unpack_from(buf, pos)[0]
                if size < 0:
                    raise DecodeError(f"negative frame size {size}", position=pos)
                if size > self.max_frame_size:
                    raise FrameTooLargeError(
                        f"frame of {size} bytes exceeds the maximum of {self.max_frame_size}", position=pos
                    )
                self._need = size
                pos += 4
            if end - pos < self._need:
                break
            out.append(buf[pos : pos + self._need])
            pos += self._need
            self._need = -1
        if pos:
            del buf[:pos]
        return out
