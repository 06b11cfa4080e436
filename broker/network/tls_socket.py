"""TLS on the broker's raw non-blocking sockets (``ssl.SSLSocket``, not asyncio's ``SSLObject`` transports).

A TLS listener's accepted socket is wrapped with ``wrap(ctx, sock)`` (no I/O), then ``handshake`` drives
``do_handshake()`` on the event loop: ``SSLWantReadError``/``SSLWantWriteError`` become ``add_reader``/
``add_writer`` waits, the whole handshake bounded by the listener's timeout. The first bytes must be a TLS
ClientHello: a plaintext client fails the handshake (Kafka never sniffs plaintext on an SSL port).

Reading and writing rules the connection follows (``broker.network.connection``):

* ``recv_into`` returns at most one decrypted TLS record's worth; bytes OpenSSL already decrypted do not
  make the file descriptor readable, so ``sock.pending()`` is checked before waiting for readability;
* ``loop.sock_sendall`` refuses ``SSLSocket``; ``send_all`` here is the write loop (OpenSSL retries need the
  same bytes again, which a moving memoryview over the same data satisfies:
  ``SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER``);
* a read that needs a write (``SSLWantWriteError`` on ``recv_into``, a TLS 1.3 key update) or a write that
  needs a read polls every millisecond instead of registering a second reader or writer on the fd, which
  would replace the one the other direction waits with.

kTLS (kernel TLS, OpenSSL's ``SSL_OP_ENABLE_KTLS`` = 0x8, no constant before Python 3.12): ``enable_ktls(ctx)``
asks OpenSSL to hand the record layer to the kernel after the handshake; ``ktls_tx_active(sock)`` reads the
socket's upper-layer protocol (``TCP_ULP``) and is True only when the kernel took TX (``b"tls"``), in which case
``os.sendfile`` on the raw fd sends encrypted records. Needs the Linux ``tls`` ULP, OpenSSL built with kTLS and
an AES-GCM or ChaCha20-Poly1305 suite; otherwise False and Fetch's file regions are read and encrypted in
chunks (``broker.network.file_sender``).

Event-loop only; one connection's socket is used by its reader and writer tasks on that loop.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "SSL_OP_ENABLE_KTLS",
    "TCP_ULP",
    "enable_ktls",
    "handshake",
    "ktls_tx_active",
    "recv_into",
    "send_all",
    "wait_fd",
    "wrap",
]

SSL_OP_ENABLE_KTLS = 0x8  # OpenSSL 3's SSL_OP_ENABLE_KTLS (ssl.OP_ENABLE_KTLS from Python 3.12)
TCP_ULP = 31  # <linux/tcp.h>: the socket's upper-layer protocol name ("tls" once the kernel does TLS)
WRITE_CHUNK = 256 * 1024  # the most one SSL_write is given
_POLL_S = 0.001  # how often a read waiting on a write (or the reverse) retries


def enable_ktls(ctx: ssl.SSLContext) -> None:
    """Ask OpenSSL to move the record layer into the kernel after the handshake (ignored where unsupported)."""
    ctx.options |= SSL_OP_ENABLE_KTLS  # an int: Python 3.11 has no ssl.Options member for 0x8


def ktls_tx_active(sock: socket.socket) -> bool:
    """True when the kernel encrypts what is written to ``sock`` (its ULP is ``tls``, TX offloaded by OpenSSL).

    Call after the handshake, with OpenSSL's buffered output flushed (``send_all`` returns only once it is).
    """
    try:
        ulp = socket.socket.getsockopt(sock, socket.IPPROTO_TCP, TCP_ULP, 16)
    except OSError:
        return False
    return ulp.rstrip(b"\0") == b"tls"


def wrap(ctx: ssl.SSLContext, sock: socket.socket) -> ssl.SSLSocket:
    """The server side of a TLS connection over the accepted ``sock`` (non-blocking; no I/O yet)."""
    tls = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    tls.setblocking(False)
    return tls


def _complete(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def wait_fd(loop: asyncio.AbstractEventLoop, fd: int, *, write: bool, timeout_s: float | None) -> None:
    """Wait until ``fd`` is readable (or writable); raises ``TimeoutError`` after ``timeout_s``."""
    fut = loop.create_future()
    (loop.add_writer if write else loop.add_reader)(fd, _complete, fut)
    try:
        if timeout_s is None:
            await fut
        else:
            await asyncio.wait_for(fut, max(timeout_s, 0.0))
    finally:
        (loop.remove_writer if write else loop.remove_reader)(fd)


async def handshake(loop: asyncio.AbstractEventLoop, sock: ssl.SSLSocket, timeout_s: float) -> None:
    """Complete the server handshake of ``sock`` within ``timeout_s`` seconds.

    Raises ``TimeoutError`` when it takes longer, ``ssl.SSLError`` when it fails (a plaintext client, an
    untrusted or missing client certificate under ``ssl.client.auth=required``), ``ConnectionError`` when the
    peer leaves.
    """
    deadline = loop.time() + timeout_s
    fd = sock.fileno()
    while True:
        try:
            sock.do_handshake()
            return
        except ssl.SSLWantReadError:
            write = False
        except ssl.SSLWantWriteError:
            write = True
        except ssl.SSLEOFError:
            raise ConnectionError("the peer closed the connection during the TLS handshake") from None
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError()
        await wait_fd(loop, fd, write=write, timeout_s=remaining)


async def send_all(loop: asyncio.AbstractEventLoop, sock: ssl.SSLSocket, data: Any) -> None:
    """Write all of ``data`` (bytes-like) through TLS, waiting for writability as needed."""
    with memoryview(data) as whole, whole.cast("B") as view:
        pos = 0
        end = len(view)
        fd = sock.fileno()
        while pos < end:
            try:
                pos += sock.send(view[pos : pos + WRITE_CHUNK])
            except (ssl.SSLWantWriteError, BlockingIOError):
                await wait_fd(loop, fd, write=True, timeout_s=None)
            except ssl.SSLWantReadError:
                await asyncio.sleep(_POLL_S)


async def recv_into(sock: ssl.SSLSocket, view: memoryview, readable: Callable[[], Awaitable[bool]]) -> int:
    """Receive decrypted bytes into ``view``; 0 at the peer's end of stream.

    One ``recv_into`` on an ``SSLSocket`` returns at most one TLS record (16 KiB, often far less: librdkafka
    writes a record per message value and per small header); every record OpenSSL can decrypt without waiting
    is taken in one go, up to ``len(view)``, so a connection costs one event-loop wake-up per batch of records,
    as a plaintext one costs one per ``recv``, not one per record. With nothing decrypted yet it awaits
    ``readable()`` (which waits for the fd, or answers False: return 0, read no more); a read that needs a write
    polls every ``_POLL_S`` (the fd's writer belongs to the connection's writer task).
    """
    filled = 0
    size = len(view)
    while True:
        try:
            got = sock.recv_into(view[filled:] if filled else view)
        except (ssl.SSLWantReadError, BlockingIOError, InterruptedError):
            if filled:
                return filled
            if not await readable():
                return 0
            continue
        except ssl.SSLWantWriteError:
            if filled:
                return filled
            await asyncio.sleep(_POLL_S)
            continue
        except ssl.SSLEOFError:
            return filled  # the next call returns 0
        if got == 0:
            return filled
        filled += got
        if filled == size:
            return filled
