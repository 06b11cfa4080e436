"""The seeds' low-level consumer (kafka.javaapi.consumer.SimpleConsumer, Kafka 0.8): one broker, stateless.

``SimpleConsumer(host, port, so_timeout_ms, buffer_size, client_id)`` keeps one connection to one broker
(opened on first use; after a connection failure a request is retried once on a new connection, as 0.8 did).
The caller passes the offset on every request and keeps its own position.

* ``fetch(FetchRequest(topic, partition, offset, max_size))`` -> ``ByteBufferMessageSet``: one Fetch request
  (version ``fetch_version``, default 0: the broker answers with message sets of magic 0; 2-3 magic 1; 4+
  record batches v2 - every format is decoded). Errors raise at once: ``OffsetOutOfRangeException`` (with the
  log's valid range, asked with ListOffsets v0, or v1 at a broker that no longer serves v0),
  ``NotLeaderForPartitionException`` (this broker does not lead the partition: 0.8's SimpleConsumer did not
  follow leaders either), ``UnknownTopicOrPartitionException``.
  When data is there (offset below the high watermark) but no complete message fits in ``max_size``,
  ``MessageSizeTooLargeException`` tells to raise ``max_size`` (Fetch v0-2 limits are hard: an entry larger
  than the limit never arrives whole).
* ``multifetch([FetchRequest, ...])`` -> ``MultiFetchResponse``: the same partitions in ONE Fetch request,
  message sets in request order; each set raises its own partition's error when iterated.
* ``get_offsets_before(topic, partition, time, max_num_offsets)`` -> up to ``max_num_offsets`` offsets,
  descending, from ListOffsets v0: ``LATEST_TIME`` (-1) the log end first, then segment start offsets;
  ``EARLIEST_TIME`` (-2) the log start offset; a time in ms: start offsets of the segments last modified
  before it.

``so_timeout_ms`` bounds connecting and each answer (a Fetch's ``max_wait_ms`` is added);
``buffer_size`` is the socket's receive buffer. Not thread-safe (as 0.8's, one user at a time); ``close``
is idempotent, and the consumer is a context manager.

Security (issue 26, not in 0.8): ``security=`` takes a ``ClientSecurity`` or a mapping of the security
settings (``{"security.protocol": "SASL_SSL", "sasl.mechanism": ..., "ssl.truststore.location": ...}``, the
keys of ``security_settings.SECURITY_KEYS``; checked at construction, stores read on first connect); the
connection (and each one reopened) uses it. A failed handshake or authentication raises ``KafkaSslError`` /
``KafkaAuthenticationError`` at once, never retried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from spark_kafkalog.client.core.fetcher import fetch_request_for
from spark_kafkalog.client.errors import (
    ConfigError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    error_for_code,
)
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.legacy.message_set import (
    ByteBufferMessageSet,
    Message,
    MessageAndOffset,
    MessageSizeTooLargeException,
    MultiFetchResponse,
    NotLeaderForPartitionException,
    OffsetOutOfRangeException,
    UnknownTopicOrPartitionException,
    partition_error,
)
from spark_kafkalog.legacy.security_settings import LegacySecurity, is_security_key
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "EARLIEST_TIME",
    "LATEST_TIME",
    "ByteBufferMessageSet",
    "FetchRequest",
    "Message",
    "MessageAndOffset",
    "MessageSizeTooLargeException",
    "MultiFetchResponse",
    "NotLeaderForPartitionException",
    "OffsetOutOfRangeException",
    "SimpleConsumer",
    "UnknownTopicOrPartitionException",
]

LATEST_TIME = -1
EARLIEST_TIME = -2

_FETCH = int(ApiKey.FETCH)
_LIST_OFFSETS = int(ApiKey.LIST_OFFSETS)
_ListOffsets = API_BY_KEY[_LIST_OFFSETS].Request


class FetchRequest(NamedTuple):
    """One partition to fetch from ``offset``, at most ``max_size`` bytes."""

    topic: str
    partition: int
    offset: int
    max_size: int = 1024 * 1024


class SimpleConsumer:
    """See the module docstring."""

    def __init__(
        self,
        host: str,
        port: int,
        so_timeout_ms: int = 30000,
        buffer_size: int = 64 * 1024,
        client_id: str = "",
        *,
        fetch_version: int = 0,
        max_wait_ms: int = 100,
        min_bytes: int = 0,
        security: Any = None,
    ) -> None:
        """``security``: a ``ClientSecurity`` (TLS/SASL; e.g. ``ClientConfig.create(props).security()``) or a
        mapping of security settings (see the module docstring); None connects in PLAINTEXT, as Kafka 0.8's
        SimpleConsumer always did."""
        lo, hi = API_BY_KEY[_FETCH].versions.lo, 12  # v13+ name topics by id, which this consumer does not know
        if not lo <= fetch_version <= hi:
            raise ValueError(f"fetch_version must be in [{lo}, {hi}], got {fetch_version}")
        if so_timeout_ms <= 0:
            raise ValueError(f"so_timeout_ms must be positive, got {so_timeout_ms}")
        self.host = host
        self.port = int(port)
        self.so_timeout_ms = so_timeout_ms
        self.buffer_size = buffer_size
        self.client_id = client_id
        self.fetch_version = fetch_version
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self._security_settings = None
        if isinstance(security, Mapping):
            unknown = sorted(str(k) for k in security if not is_security_key(k))
            if unknown:
                raise ConfigError(
                    f"SimpleConsumer security: {', '.join(map(repr, unknown))} not a security setting "
                    "(security.protocol, ssl.*, sasl.*)"
                )
            self._security_settings = LegacySecurity.from_props(security)
        self.security = security if self._security_settings is None else None
        self._conn: SocketConnection | None = None
        self._closed = False

    # connection ----------------------------------------------------------------------------------
    @property
    def broker(self) -> str:
        return f"{self.host}:{self.port}"

    def _security(self) -> Any:
        if self.security is None and self._security_settings is not None:
            self.security = self._security_settings.security()  # built once, on the first connect
        return self.security

    def _connection(self) -> SocketConnection:
        if self._closed:
            raise KafkaClientError(f"the SimpleConsumer of {self.broker} is closed", retriable=False)
        if self._conn is None or self._conn.closed:
            timeout = self.so_timeout_ms / 1000.0
            self._conn = SocketConnection.open(
                self.host,
                self.port,
                client_id=self.client_id,
                connect_timeout=timeout,
                request_timeout=timeout,
                receive_buffer_bytes=self.buffer_size,
                security=self._security(),
            )
        return self._conn

    def _request(self, api_key: int, body: Any, version: int, *, extra_ms: int = 0) -> Any:
        """One request at ``version``; a lost connection is reopened and the request sent once more."""
        timeout = (self.so_timeout_ms + extra_ms) / 1000.0
        for attempt in (1, 2):
            conn = self._connection()
            try:
                return conn.request(api_key, body, version=version, timeout=timeout)
            except (KafkaConnectionError, KafkaTimeoutError):
                conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the connection. Idempotent."""
        self._closed = True
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> SimpleConsumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Fetch ---------------------------------------------------------------------------------------
    def fetch(self, request: FetchRequest) -> ByteBufferMessageSet:
        """The messages of one partition from ``request.offset`` (see the module docstring)."""
        (message_set,) = self._fetch([request])
        message_set.raise_for_error()
        if message_set.valid_bytes == 0 and (message_set.size > 0 or 0 <= request.offset < message_set.high_watermark):
            size = f" of {message_set.size} bytes" if message_set.size else ""
            raise MessageSizeTooLargeException(
                f"no complete message{size} fits in max_size {request.max_size} at offset {request.offset} of "
                f"{request.topic}-{request.partition} (the partition holds offsets up to "
                f"{message_set.high_watermark}): raise FetchRequest.max_size",
                topic=request.topic,
                partition=request.partition,
                retriable=False,
            )
        return message_set

    def multifetch(self, requests: Sequence[FetchRequest]) -> MultiFetchResponse:
        """One Fetch request for every partition of ``requests``; message sets in request order."""
        return MultiFetchResponse(self._fetch(list(requests)))

    def _fetch(self, requests: list[FetchRequest]) -> list[ByteBufferMessageSet]:
        seen: set[TopicPartition] = set()
        for r in requests:
            if r.offset < 0 or r.max_size <= 0:
                raise ValueError(f"fetch offset must be >= 0 and max_size > 0, got {r}")
            tp = TopicPartition(r.topic, r.partition)
            if tp in seen:
                raise ValueError(f"{tp.topic}-{tp.partition} is requested twice in one multifetch")
            seen.add(tp)
        if not requests:
            return []
        body = fetch_request_for(
            {TopicPartition(r.topic, r.partition): (r.offset, -1, -1) for r in requests},
            partition_max_bytes=max(r.max_size for r in requests),
            max_bytes=sum(r.max_size for r in requests),
            max_wait_ms=self.max_wait_ms,
            min_bytes=self.min_bytes,
        )
        sizes = {TopicPartition(r.topic, r.partition): r.max_size for r in requests}
        if len(set(sizes.values())) > 1:  # each partition keeps its own limit
            for topic in body.topics:
                for p in topic.partitions:
                    p.partition_max_bytes = sizes[TopicPartition(topic.topic, p.partition)]
        response = self._request(_FETCH, body, self.fetch_version, extra_ms=self.max_wait_ms)
        if getattr(response, "error_code", 0):
            raise error_for_code(response.error_code, "Fetch", broker=self.broker)
        data: dict[TopicPartition, Any] = {}
        for topic in response.responses:
            for p in topic.partitions:
                data[TopicPartition(topic.topic, p.partition_index)] = p
        out_of_range = [tp for tp, p in data.items() if p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE]
        valid = self._valid_ranges(out_of_range) if out_of_range else {}
        sets = []
        for r in requests:
            tp = TopicPartition(r.topic, r.partition)
            p = data.get(tp)
            error: KafkaClientError | None
            if p is None:
                error = KafkaClientError(
                    f"Fetch response of broker {self.broker} omits {tp.topic}-{tp.partition}",
                    topic=tp.topic,
                    partition=tp.partition,
                )
                sets.append(ByteBufferMessageSet(b"", topic=r.topic, partition=r.partition, error=error))
                continue
            error = None
            if p.error_code:
                error = partition_error(
                    p.error_code, r.topic, r.partition, r.offset, broker=self.broker, valid=valid.get(tp)
                )
            sets.append(
                ByteBufferMessageSet(
                    b"" if p.error_code else p.records or b"",
                    topic=r.topic,
                    partition=r.partition,
                    fetch_offset=r.offset,
                    error_code=p.error_code,
                    high_watermark=p.high_watermark,
                    error=error,
                )
            )
        return sets

    def _valid_ranges(self, tps: list[TopicPartition]) -> dict[TopicPartition, tuple[int, int]]:
        """(log start, log end) of each partition, or nothing for those the broker would not tell."""
        try:
            # ListOffsets v0 as the seeds asked; v1 (one offset each) at a broker that dropped v0 (Kafka 4, KIP-896)
            version = 0 if self._connection().versions.supports(_LIST_OFFSETS, 0, 0) else 1
            earliest = self._offsets_before(tps, EARLIEST_TIME, 1, version=version)
            latest = self._offsets_before(tps, LATEST_TIME, 1, version=version)
        except KafkaClientError:
            return {}
        ranges = {}
        for tp in tps:
            first, last = earliest.get(tp), latest.get(tp)
            if isinstance(first, list) and first and isinstance(last, list) and last:
                ranges[tp] = (first[0], last[0])
        return ranges

    # ListOffsets v0 --------------------------------------------------------------------------------
    def get_offsets_before(self, topic: str, partition: int, time: int, max_num_offsets: int) -> list[int]:
        """Up to ``max_num_offsets`` offsets before ``time`` (ms, or ``LATEST_TIME``/``EARLIEST_TIME``),
        descending (see the module docstring). A partition error raises (e.g.
        ``NotLeaderForPartitionException``)."""
        tp = TopicPartition(topic, partition)
        answer = self._offsets_before([tp], time, max_num_offsets)[tp]
        if isinstance(answer, KafkaClientError):
            raise answer
        return answer

    def _offsets_before(
        self, tps: list[TopicPartition], time: int, max_num: int, *, version: int = 0
    ) -> dict[TopicPartition, list[int] | KafkaClientError]:
        """ListOffsets at ``version``: v0's offset lists, or (v1) the one offset of each partition as a list."""
        by_topic: dict[str, list[Any]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(
                _ListOffsets.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=tp.partition, timestamp=time, max_num_offsets=max_num
                )
            )
        body = _ListOffsets(
            replica_id=-1,
            isolation_level=0,
            topics=[_ListOffsets.ListOffsetsTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        )
        response = self._request(_LIST_OFFSETS, body, version)
        out: dict[TopicPartition, list[int] | KafkaClientError] = {}
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                if p.error_code:
                    out[tp] = partition_error(p.error_code, tp.topic, tp.partition, time, broker=self.broker)
                else:
                    out[tp] = list(p.old_style_offsets) if version == 0 else [p.offset]
        for tp in tps:
            if tp not in out:
                out[tp] = KafkaClientError(f"ListOffsets response of broker {self.broker} omits {tp}")
        return out
