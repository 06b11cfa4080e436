"""asyncio transport for ``KafkaConnection`` (for the broker's replica fetchers and other async code).

``conn = await AsyncKafkaConnection.open(host, port)`` connects and completes the handshake;
``await conn.request(api_key, body)`` returns the response body. Several coroutines may issue requests
concurrently on one connection: requests are written in call order and a reader task completes their
futures in response order. A request not answered within its timeout closes the connection (every other
in-flight request fails with ``KafkaConnectionError``) and raises ``KafkaTimeoutError``.

With a ``security`` (``ClientSecurity``): TLS through ``asyncio.open_connection(ssl=context,
server_hostname=host, ssl_handshake_timeout=connect_timeout)`` (SNI set also when host names are not
checked; a failed TLS handshake raises ``KafkaSslError``), and SASL inside ``KafkaConnection`` before
``open`` returns (``KafkaAuthenticationError``); KIP-368 re-authentication happens on the live connection,
started by the ``request`` that finds it due.

All methods must be called from the event loop that opened the connection.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from spark_kafkalog.client.errors import KafkaConnectionError, KafkaSslError, KafkaTimeoutError
from spark_kafkalog.client.network.connection import InFlightRequest, KafkaConnection
from spark_kafkalog.client.network.versions import ApiVersionTable, api_name
from spark_kafkalog.protocol import DEFAULT_MAX_FRAME_SIZE

__all__ = ["AsyncKafkaConnection"]

_READ_SIZE = 256 * 1024


def _retrieve(future: asyncio.Future) -> None:
    """Mark a future's exception as seen: a caller that timed out or was cancelled no longer awaits it."""
    if not future.cancelled():
        future.exception()


class AsyncKafkaConnection:
    """One broker connection on an asyncio event loop."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, protocol: KafkaConnection) -> None:
        self._reader = reader
        self._writer = writer
        self.protocol = protocol
        self._reader_task: asyncio.Task | None = None
        self._handshake_done: asyncio.Future = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        *,
        node_id: int | None = None,
        client_id: str | None = "kafkalog",
        connect_timeout: float = 10.0,
        request_timeout: float = 30.0,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        security: Any = None,
    ) -> AsyncKafkaConnection:
        """Connect (TLS when ``security`` says so), complete the ApiVersions handshake and SASL.

        Raises ``KafkaConnectionError``, ``KafkaSslError`` (TLS handshake) or ``KafkaAuthenticationError``.
        """
        peer = f"{node_id if node_id is not None and node_id >= 0 else 'bootstrap'} ({host}:{port})"
        tls: dict[str, Any] = {}
        if security is not None and security.uses_tls:
            tls = {"ssl": security.ssl_context, "server_hostname": host, "ssl_handshake_timeout": connect_timeout}
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, **tls), connect_timeout)
        except ssl.SSLError as e:
            from spark_kafkalog.client.network.socket_transport import tls_failure_reason

            if isinstance(e, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
                raise KafkaConnectionError(
                    f"cannot connect to broker {peer}: the broker closed the connection during the TLS handshake",
                    broker=peer,
                ) from None
            raise KafkaSslError(
                f"TLS handshake with broker {peer} failed: {tls_failure_reason(e)}", broker=peer
            ) from None
        except (TimeoutError, OSError) as e:
            # the reason and ``refused`` as the blocking transport says them (the pool's bootstrap give-up needs it)
            from spark_kafkalog.client.network.socket_transport import _connect_failure, format_address

            reason, refused = _connect_failure(e, connect_timeout)
            raise KafkaConnectionError(
                f"cannot connect to broker {peer}: {reason}",
                broker=peer,
                address=format_address(host, port),
                reason=reason,
                refused=refused,
            ) from None
        protocol = KafkaConnection(
            peer, client_id=client_id, max_frame_size=max_frame_size, node_id=node_id, security=security
        )
        conn = cls(reader, writer, protocol)
        protocol.start_handshake()
        conn._write()
        conn._reader_task = asyncio.get_running_loop().create_task(conn._read_loop(), name=f"kafka-reader-{peer}")
        try:
            await asyncio.wait_for(asyncio.shield(conn._handshake_done), request_timeout)
        except TimeoutError:
            await conn.close(
                KafkaTimeoutError(
                    f"no answer to ApiVersions from broker {peer} within {request_timeout:g} s", broker=peer
                )
            )
            raise protocol.close_reason from None  # type: ignore[misc]
        except BaseException:
            await conn.close()
            raise
        return conn

    @property
    def peer(self) -> str:
        return self.protocol.peer

    @property
    def versions(self) -> ApiVersionTable:
        assert self.protocol.versions is not None
        return self.protocol.versions

    @property
    def closed(self) -> bool:
        return self.protocol.closed

    def _write(self) -> None:
        data = self.protocol.data_to_send()
        if data:
            self._writer.write(data)

    async def request(self, api_key: int, body: Any, *, timeout: float = 30.0, **kwargs: Any) -> Any:
        """Send a request and await its response body (``None`` when no response is expected).

        Keyword arguments are those of ``KafkaConnection.send``.
        """
        future = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        request = self.protocol.send(api_key, body, context=future, **kwargs)
        self._write()
        try:
            await self._writer.drain()
        except OSError as e:
            self._lost(e)
        if request is None:
            return None
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            error = KafkaTimeoutError(
                f"no answer to {api_name(api_key)} v{request.version} from broker {self.peer} within {timeout:g} s",
                broker=self.peer,
            )
            await self.close(error)
            raise error from None

    async def _read_loop(self) -> None:
        try:
            while not self.protocol.closed:
                data = await self._reader.read(_READ_SIZE)
                if not data:
                    self._lost(None)
                    break
                self._complete(self.protocol.receive_data(data))
                if self.protocol.ready and not self._handshake_done.done():
                    self._handshake_done.set_result(None)
                self._write()  # a handshake retry may have been queued
                if self.protocol.closed:
                    self._finish_handshake_with_error()
        except OSError as e:
            self._lost(e)
        except asyncio.CancelledError:
            pass

    def _complete(self, done: list[InFlightRequest]) -> None:
        for request in done:
            future = request.context
            if future is None or future.done():
                continue
            if request.error is not None:
                future.set_exception(request.error)
            else:
                future.set_result(request.response)

    def _finish_handshake_with_error(self) -> None:
        if not self._handshake_done.done():
            self._handshake_done.set_exception(
                self.protocol.close_reason or KafkaConnectionError(f"handshake with {self.peer} failed")
            )

    def _lost(self, error: OSError | None) -> None:
        text = f"connection to broker {self.peer} lost" + (f": {error}" if error else " (closed by the broker)")
        self._complete(self.protocol.close(KafkaConnectionError(text, broker=self.peer)))
        self._finish_handshake_with_error()
        self._writer.close()

    async def close(self, reason: BaseException | None = None) -> None:
        """Close the connection; in-flight requests fail with ``reason``. Idempotent."""
        if not self.protocol.closed:
            self._complete(self.protocol.close(reason))
        self._finish_handshake_with_error()
        if self._handshake_done.done() and not self._handshake_done.cancelled():
            self._handshake_done.exception()  # mark retrieved
        task = self._reader_task
        if task is not None and task is not asyncio.current_task() and not task.done():
            task.cancel()
            await asyncio.wait([task])  # a cancellation of the caller itself still propagates
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, ConnectionError):
            pass

    async def __aenter__(self) -> AsyncKafkaConnection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
