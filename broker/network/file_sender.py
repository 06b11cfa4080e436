"""Sending a file region (Fetch's record data straight from a segment file) to a client socket.

A region is anything with ``fileno()``, ``.position`` and ``len()`` (``broker.log.file_region.FileRegion``).
Two ways, chosen per connection (``region_path``):

* ``"sendfile"``: ``os.sendfile`` from the segment file to the socket's fd, no copy through Python: a
  PLAINTEXT connection, or a TLS one whose kernel took the TX record layer (kTLS);
* ``"chunked"``: a TLS connection without kTLS: the region is read with ``os.preadv`` into a reused
  ``CHUNK_SIZE`` buffer (``SendBuffers``) and each chunk written through TLS (OpenSSL cuts its own 16 KiB
  records), as Kafka's ``SslTransportLayer.transferFrom`` does.

Either way a region that ends early (the log was truncated during the send) raises ``RegionEndedEarly``, which
closes the connection: the response's size prefix promised bytes that are gone.

Event-loop only. ``SendBuffers`` is shared by the connections of one server: a buffer is taken for one
region's send and given back after it, so idle connections hold none.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["CHUNK_SIZE", "RegionEndedEarly", "SendBuffers", "region_path", "send_chunked", "sendfile"]

CHUNK_SIZE = 256 * 1024


class RegionEndedEarly(ConnectionError):
    """The file region was shorter than announced (log truncated during the send)."""

    def __init__(self, remaining: int) -> None:
        super().__init__(f"file region ended {remaining} bytes early (log truncated during the send)")
        self.remaining = remaining


def region_path(uses_tls: bool, ktls_tx: bool) -> str:
    """``"sendfile"`` for plaintext sockets and kTLS ones, ``"chunked"`` for user-space TLS."""
    return "sendfile" if not uses_tls or ktls_tx else "chunked"


class SendBuffers:
    """Reusable ``CHUNK_SIZE`` buffers for chunked region sends; at most ``keep`` are kept when free."""

    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self._free: list[bytearray] = []
        self.allocated = 0

    def take(self) -> bytearray:
        if self._free:
            return self._free.pop()
        self.allocated += 1
        return bytearray(CHUNK_SIZE)

    def give(self, buffer: bytearray) -> None:
        if len(self._free) < self.keep:
            self._free.append(buffer)


async def sendfile(out_fd: int, region: Any, writable: Callable[[], Awaitable[None]]) -> None:
    """Send ``region`` with ``os.sendfile`` to ``out_fd`` (non-blocking), awaiting ``writable()`` when it is full."""
    offset = region.position
    remaining = len(region)
    in_fd = region.fileno()
    while remaining > 0:
        try:
            sent = os.sendfile(out_fd, in_fd, offset, remaining)
        except BlockingIOError:
            await writable()
            continue
        if sent == 0:
            raise RegionEndedEarly(remaining)
        offset += sent
        remaining -= sent


async def send_chunked(region: Any, buffers: SendBuffers, send_all: Callable[[memoryview], Awaitable[None]]) -> None:
    """Read ``region`` chunk by chunk into a pooled buffer and ``await send_all(chunk)`` each one."""
    offset = region.position
    remaining = len(region)
    in_fd = region.fileno()
    buffer = buffers.take()
    view = memoryview(buffer)
    try:
        while remaining > 0:
            want = min(remaining, len(view))
            got = os.preadv(in_fd, [view[:want]], offset)
            if got == 0:
                raise RegionEndedEarly(remaining)
            await send_all(view[:got])
            offset += got
            remaining -= got
    finally:
        buffers.give(buffer)
