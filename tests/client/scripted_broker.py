"""A scripted TCP peer for client edge cases (partial frames, disconnects, pipelining, leader moves).

Not a Kafka substitute: it answers ApiVersions by itself (with a configurable table) and hands every other
request to a per-API handler that the test writes; it stores nothing. Each accepted connection is served
by its own thread, requests in order, with our own protocol codec.

A handler gets ``(request, connection)`` and returns a response body, ``NO_RESPONSE`` (write nothing),
``CLOSE`` (drop the connection without answering), or a ``Raw(bytes)`` to write verbatim.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.protocol import (
    API_BY_KEY,
    ApiKey,
    FrameDecoder,
    UnsupportedVersionError,
    decode_request,
    encode_response,
)

NO_RESPONSE = object()
CLOSE = object()


@dataclass
class Raw:
    data: bytes
    chunk: int = 0  # write in chunks of this size (0: at once)
    pause: float = 0.0  # seconds between chunks
    close: bool = False  # drop the connection after writing


METADATA = API_BY_KEY[int(ApiKey.METADATA)]
API_VERSIONS = API_BY_KEY[int(ApiKey.API_VERSIONS)]


def default_api_ranges() -> dict[int, tuple[int, int]]:
    return {key: (spec.min_version, spec.max_version) for key, spec in API_BY_KEY.items()}


@dataclass
class Served:
    """One request the scripted broker received."""

    api_key: int
    version: int
    correlation_id: int
    body: Any
    connection: int


class ScriptedBroker:
    def __init__(
        self,
        node_id: int = 0,
        *,
        handlers: dict[int, Callable[..., Any]] | None = None,
        api_ranges: dict[int, tuple[int, int]] | None = None,
        port: int = 0,
    ) -> None:
        self.node_id = node_id
        self.handlers: dict[int, Callable[..., Any]] = dict(handlers or {})
        self.api_ranges = default_api_ranges() if api_ranges is None else api_ranges
        self.served: list[Served] = []
        self.connections = 0
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self._sock.listen(16)
        self.host, self.port = self._sock.getsockname()
        self._stopped = False
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True, name=f"scripted-broker-{node_id}").start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def requests(self, api_key: int) -> list[Served]:
        with self._lock:
            return [s for s in self.served if s.api_key == api_key]

    def stop(self) -> None:
        self._stopped = True
        try:
            self._sock.close()
        except OSError:
            pass
        self.drop_connections()

    def drop_connections(self) -> None:
        with self._lock:
            conns, self._open = self._open, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                number = self.connections
                self._open.append(conn)
            threading.Thread(target=self._serve, args=(conn, number), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        decoder = FrameDecoder()
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for frame in decoder.feed(data):
                    if not self._answer(conn, bytes(frame), number):
                        conn.close()
                        return
        except OSError:
            return

    def _answer(self, conn: socket.socket, frame: bytes, number: int) -> bool:
        try:
            request = decode_request(frame)
        except UnsupportedVersionError as e:
            header = e.header  # type: ignore[attr-defined]
            if header.api_key != int(ApiKey.API_VERSIONS):
                return False
            body = API_VERSIONS.Response(error_code=35, api_keys=self._api_keys(), throttle_time_ms=0)
            conn.sendall(encode_response(18, 0, header.correlation_id, body, framed=True))
            return True
        h = request.header
        with self._lock:
            self.served.append(Served(h.api_key, h.api_version, h.correlation_id, request.body, number))
        if h.api_key == int(ApiKey.API_VERSIONS):
            lo, hi = self.api_ranges.get(18, (0, 4))
            if not lo <= h.api_version <= hi:
                body = API_VERSIONS.Response(error_code=35, api_keys=self._api_keys(), throttle_time_ms=0)
                conn.sendall(encode_response(18, 0, h.correlation_id, body, framed=True))
                return True
            body = API_VERSIONS.Response(error_code=0, api_keys=self._api_keys(), throttle_time_ms=0)
            conn.sendall(encode_response(18, h.api_version, h.correlation_id, body, framed=True))
            return True
        handler = self.handlers.get(h.api_key)
        if handler is None:
            return False
        result = handler(request, number)
        if result is NO_RESPONSE:
            return True
        if result is CLOSE:
            return False
        if isinstance(result, Raw):
            data = result.data
            if not result.chunk:
                conn.sendall(data)
            else:
                for i in range(0, len(data), result.chunk):
                    conn.sendall(data[i : i + result.chunk])
                    time.sleep(result.pause)
            return not result.close
        conn.sendall(encode_response(h.api_key, h.api_version, h.correlation_id, result, framed=True))
        return True

    def _api_keys(self) -> list[Any]:
        K = API_VERSIONS.Response.ApiVersion
        return [K(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(self.api_ranges.items())]


@dataclass
class ClusterView:
    """What the scripted brokers say in Metadata: brokers, controller and partition leaders."""

    brokers: list[ScriptedBroker]
    topics: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> partition -> leader
    topic_errors: dict[str, int] = field(default_factory=dict)
    leader_epoch: int = 0
    controller: int = 0

    def metadata(self, request: Any, _conn: int = 0) -> Any:
        R = METADATA.Response
        wanted = None if request.body.topics is None else [t.name for t in request.body.topics]
        if wanted == [] and request.version == 0:
            wanted = None
        topics = []
        for name in sorted(self.topics) if wanted is None else wanted:
            error = self.topic_errors.get(name, 0)
            parts = self.topics.get(name)
            if parts is None:
                topics.append(R.MetadataResponseTopic(error_code=3, name=name, partitions=[]))
                continue
            topics.append(
                R.MetadataResponseTopic(
                    error_code=error,
                    name=name,
                    partitions=[
                        R.MetadataResponseTopic.MetadataResponsePartition(
                            error_code=0 if leader >= 0 else 5,
                            partition_index=p,
                            leader_id=leader,
                            leader_epoch=self.leader_epoch,
                            replica_nodes=[max(leader, 0)],
                            isr_nodes=[max(leader, 0)],
                            offline_replicas=[],
                        )
                        for p, leader in sorted(parts.items())
                    ],
                )
            )
        return R(
            brokers=[
                R.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=None) for b in self.brokers
            ],
            cluster_id="scripted",
            controller_id=self.controller,
            topics=topics,
        )

    def install(self) -> None:
        for b in self.brokers:
            b.handlers[int(ApiKey.METADATA)] = self.metadata
