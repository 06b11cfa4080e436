"""``KafkaClient``: the blocking client core - connections to every broker, metadata, ListOffsets, Fetch.

One ``SocketConnection`` per broker in a ``ConnectionPool`` (opened on first use, ApiVersions negotiated
per connection) plus bootstrap connections until the first Metadata answer names the brokers. Requests
are sent at the highest version both sides support; a version the broker does not advertise is never sent.

Failure handling (``retries``, ``retry.backoff.ms`` .. ``retry.backoff.max.ms``, bounded by
``default.api.timeout.ms``): the partition errors of ``errors.REFRESH_METADATA_ERRORS`` (leader moved,
unknown topic or partition, ...) invalidate the topic's metadata, back off and retry against the (possibly
new) leader; other retriable errors back off and retry; a lost or timed-out connection is closed, the
metadata of what that broker led is invalidated, and the call is retried on a fresh connection. A bootstrap
address that refuses every attempt fails within seconds (see ``pool``). An error raised after the retries
ran out says what was attempted, how often and for how long.

Concurrency: every public method takes the client's lock around its network I/O, so one client may be
shared by a few threads (the producer shares one between the caller and its sender thread), but calls are
serialised. ``fetch_batches`` is a generator that holds the lock only while it talks to a broker.

Fetch (``fetch_batches``) is ``ClientFetchMixin``'s (``client_fetch``): by topic id (v13+) when the metadata
knows it. Follower fetching (KIP-392): with ``client.rack`` set, Fetch v11+ carries it as ``rack_id``; a
partition whose answer names a ``preferred_read_replica`` is then fetched from that broker until
``metadata.max.age.ms`` passes or a fetch from it fails (``read_replicas.PreferredReadReplicas``), as Java's
consumer does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client_base import new_client_stats
from spark_kafkalog.client.core.client_fetch import ClientFetchMixin
from spark_kafkalog.client.core.offsets import (
    check_spec,
    list_offsets_request,
    min_list_offsets_version,
    parse_list_offsets,
)
from spark_kafkalog.client.core.read_replicas import PreferredReadReplicas
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    ConfigError,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    error_for_code,
)
from spark_kafkalog.client.metadata import MetadataCache, TopicInfo, metadata_request
from spark_kafkalog.client.network.pool import ConnectionPool
from spark_kafkalog.client.network.retry import RetryPlan, gave_up
from spark_kafkalog.client.network.socket_transport import SocketConnection
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = [
    "KafkaClient",
    "client_config",
    "collect_list_offsets",
    "partition_leader",
    "topic_error",
    "topic_status",
    "topic_wait_plan",
]

_METADATA = int(ApiKey.METADATA)
_FETCH = int(ApiKey.FETCH)
_LIST_OFFSETS = int(ApiKey.LIST_OFFSETS)


def client_config(
    bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None,
    config: Mapping[str, Any] | ClientConfig | None,
    **kwargs: Any,
) -> ClientConfig:
    """A client's ``ClientConfig`` from its constructor's arguments: the bootstrap servers (or the whole
    settings mapping / ``ClientConfig``) first, ``config=``, and the snake_case or dotted settings as keyword
    arguments; raises ``ConfigError`` when ``bootstrap.servers`` ends up unset. Shared by ``KafkaClient``
    and the asyncio client (``spark_kafkalog.client.aio``)."""
    if isinstance(bootstrap_servers, (Mapping, ClientConfig)):
        if config is not None:
            raise ConfigError("pass the settings either as the first argument or as config=, not both")
        config, bootstrap_servers = bootstrap_servers, None
    cfg = ClientConfig.create(config, **kwargs)
    if bootstrap_servers is not None:
        cfg = cfg.with_overrides(bootstrap_servers=bootstrap_servers)
    if not cfg.bootstrap_servers:
        raise ConfigError("setting 'bootstrap.servers' is required, e.g. 'localhost:9092'")
    return cfg


class KafkaClient(ClientFetchMixin):
    """Blocking Kafka client: metadata, ListOffsets and partition fetches (see the module docstring; the
    fetches are ``ClientFetchMixin``'s, in ``client_fetch``).

    ``KafkaClient("host:9092", request_timeout_ms=5000)`` or ``KafkaClient({"bootstrap.servers": ...})``.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        *,
        _producer: bool = False,
        **kwargs: Any,
    ) -> None:
        cfg = self.config = client_config(bootstrap_servers, config, **kwargs)
        self._producer = _producer
        self._lock = threading.RLock()
        self.metadata = MetadataCache(cfg.metadata_max_age_ms)
        self._pool = ConnectionPool(cfg, self.metadata)
        self.read_replicas = PreferredReadReplicas(cfg.metadata_max_age_ms)
        """Partitions fetched from a preferred read replica (KIP-392) rather than their leader."""
        self.stats: dict[str, Any] = self.new_stats()
        self._closed = False

    # lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every connection. Idempotent."""
        with self._lock:
            self._closed = True
            self._pool.close()

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def new_stats(self) -> dict[str, Any]:
        """The shared counters and ``ranges_fetched``: (topic, partition, start, end) of every fetch_batches call."""
        return {**new_client_stats(), "ranges_fetched": []}

    # connections -------------------------------------------------------------------------------
    def connection(self, node_id: int) -> SocketConnection:
        """The open connection to broker ``node_id`` (connecting on first use)."""
        with self._lock:
            self._check_open()
            if self._pool.get(node_id) is None and self.metadata.broker(node_id) is None:
                self.refresh_metadata_once(None)
            return self._pool.connection(node_id)

    def any_connection(self) -> SocketConnection:
        """An open connection to some broker: an existing one, a known broker, or a bootstrap server."""
        with self._lock:
            self._check_open()
            return self._pool.any_connection()

    def _drop(self, conn: SocketConnection, reason: BaseException | None = None) -> None:
        with self._lock:
            self._pool.drop(conn, reason)

    def _call(
        self, conn: SocketConnection, api_key: int, body: Any, *, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        """One request on ``conn``; a broken connection is dropped before the error propagates."""
        self.stats["requests"] += 1
        try:
            return conn.request(
                api_key, body, timeout=self.config.request_timeout_ms / 1000.0 if timeout is None else timeout, **kwargs
            )
        except (KafkaConnectionError, KafkaTimeoutError) as e:
            self._drop(conn, e)
            raise

    def send_request(
        self,
        api_key: int,
        body: Any | Callable[[int], Any],
        *,
        node_id: int | None = None,
        min_version: int = 0,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[int, Any]:
        """Send one request to ``node_id`` (any broker when ``None``); returns ``(version, response)``.

        ``body`` may be a function of the negotiated version (for APIs whose request shape changes).
        Connection failures are raised, not retried (see ``call_with_retries``).
        """
        with self._lock:
            conn = self.any_connection() if node_id is None else self.connection(node_id)
            version = conn.versions.pick(api_key, min_version, max_version)
            if callable(body):
                body = body(version)
            timeout = None if timeout_ms is None else timeout_ms / 1000.0
            return version, self._call(conn, api_key, body, version=version, timeout=timeout)

    def call_with_retries(self, fn: Callable[[], Any], *, what: str, timeout_ms: int | None = None) -> Any:
        """Run ``fn`` until it returns, retrying retriable ``KafkaClientError``s with backoff."""
        plan = self.retry_plan(timeout_ms)
        while True:
            try:
                return fn()
            except KafkaClientError as e:
                if not e.retriable:
                    self.name_principal(e)
                    raise
                self.stats["retries"] += 1
                if not plan.sleep_or_give_up():
                    e.add_context(gave_up(what, plan))
                    raise

    # metadata ----------------------------------------------------------------------------------
    def refresh_metadata_once(self, topics: Iterable[str] | None) -> None:
        topics = None if topics is None else sorted(set(topics))
        with self._lock:
            conn = self.any_connection()
            version = conn.versions.pick(_METADATA)
            body = metadata_request(version, topics, self.config.auto_create_topics(producer=self._producer))
            self.stats["metadata_requests"] += 1
            response = self._call(conn, _METADATA, body, version=version)
            error = getattr(response, "error_code", ErrorCode.NONE)  # v13+: a top-level error (KIP-1102)
            if error != ErrorCode.NONE:
                # REBOOTSTRAP_REQUIRED and the rest: this broker's answer is not to be used; the connection is
                # dropped so the next attempt asks another broker (or a bootstrap server)
                self._drop(conn)
                raise error_for_code(error, "Metadata")
            self.metadata.update(response, all_topics=topics is None)

    def refresh_metadata(self, topics: Iterable[str] | None = None) -> None:
        """Fetch metadata for ``topics`` (every topic when ``None``), retrying connection failures."""
        topics = None if topics is None else list(topics)
        self.call_with_retries(lambda: self.refresh_metadata_once(topics), what="Metadata")

    def topic_info(self, topic: str, *, refresh: bool = False, timeout_ms: int | None = None) -> TopicInfo:
        """Current metadata of ``topic``.

        A topic being created (LEADER_NOT_AVAILABLE) is waited for up to ``timeout_ms`` (default
        ``default.api.timeout.ms``); an
        unknown topic is asked for three more times with backoff (metadata propagates between brokers),
        then raises ``KafkaClientError`` with UNKNOWN_TOPIC_OR_PARTITION.
        """
        if refresh or self.metadata.needs_refresh(topic):
            self.refresh_metadata([topic])
        plan: RetryPlan | None = None
        while True:
            info, code = topic_status(self.metadata, topic)
            if info is not None:
                return info
            if code not in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE):
                break
            if plan is None:
                plan = topic_wait_plan(self.retry_plan(timeout_ms), code)
            if not plan.sleep_or_give_up():
                break
            self.stats["retries"] += 1
            self.refresh_metadata([topic])
        error = topic_error(code, topic)
        self.name_principal(error)
        raise error

    def topics(self, *, include_internal: bool = False) -> dict[str, int]:
        """Every topic of the cluster with its partition count (always asks a broker)."""
        self.refresh_metadata(None)
        return {
            name: len(info.partitions)
            for name, info in sorted(self.metadata.topics().items())
            if not info.error_code and (include_internal or not info.is_internal)
        }

    def partitions_for(self, topic: str) -> list[int]:
        """Partition ids of ``topic``, sorted."""
        return sorted(self.topic_info(topic).partitions)

    def leader_for(self, tp: TopicPartition) -> int:
        """Node id of the partition's leader, waiting (with backoff) while it has none."""
        return self._leader_and_epoch(tp)[0]

    def _leader_and_epoch(self, tp: TopicPartition) -> tuple[int, int]:
        tp = TopicPartition(*tp)

        def lookup() -> tuple[int, int]:
            info = self.topic_info(tp.topic)
            if tp.partition not in info.partitions:  # new partitions: ask again before saying it does not exist
                info = self.topic_info(tp.topic, refresh=True)
            return partition_leader(info, tp, self.metadata)

        return self.call_with_retries(lookup, what=f"leader of {tp}")

    # ListOffsets -------------------------------------------------------------------------------
    def list_offsets(
        self, specs: Mapping[TopicPartition, int], *, isolation_level: int | None = None
    ) -> dict[TopicPartition, int]:
        """Offsets for ``{tp: spec}``: -2 earliest (log start), -1 latest (high watermark, or the last
        stable offset under read_committed), -3 the record with the largest timestamp, a timestamp >= 0
        the earliest offset whose timestamp is >= it - or the latest offset when there is none (Kafka
        itself answers -1 there; see ``list_offsets_with_timestamps(no_match="raw")``)."""
        result = self.list_offsets_with_timestamps(specs, isolation_level=isolation_level)
        return {tp: offset for tp, (offset, _) in result.items()}

    def list_offsets_with_timestamps(
        self,
        specs: Mapping[TopicPartition, int],
        *,
        isolation_level: int | None = None,
        no_match: str = "latest",
    ) -> dict[TopicPartition, tuple[int, int]]:
        """``{tp: (offset, timestamp)}`` for ``{tp: spec}`` (see ``list_offsets``).

        The timestamp is the found record's for a timestamp or -3 spec, -1 otherwise. When no record
        has a timestamp >= a timestamp spec, the answer is ``(latest offset, -1)`` with
        ``no_match="latest"`` and Kafka's own ``(-1, -1)`` with ``no_match="raw"``.
        """
        if no_match not in ("latest", "raw"):
            raise ValueError(f"no_match must be 'latest' or 'raw', not {no_match!r}")
        iso = self.config.isolation_level if isolation_level is None else isolation_level
        checked = {TopicPartition(*tp): check_spec(TopicPartition(*tp), spec) for tp, spec in specs.items()}
        result: dict[TopicPartition, tuple[int, int]] = {}
        remaining = dict(checked)
        plan = self.retry_plan()
        while remaining:
            failed, last_error = self._list_offsets_round(remaining, iso, result)
            remaining = failed
            if remaining:
                self.stats["retries"] += 1
                if not plan.sleep_or_give_up():
                    assert last_error is not None
                    last_error.add_context(gave_up("ListOffsets", plan))
                    raise last_error
        if no_match == "latest":
            unmatched = {tp: OffsetSpec.LATEST for tp, spec in checked.items() if spec >= 0 and result[tp][0] < 0}
            if unmatched:
                latest = self.list_offsets_with_timestamps(unmatched, isolation_level=iso, no_match="raw")
                for tp, (offset, _) in latest.items():
                    result[tp] = (offset, -1)
        return result

    def _list_offsets_round(
        self, specs: Mapping[TopicPartition, int], iso: int, result: dict[TopicPartition, tuple[int, int]]
    ) -> tuple[dict[TopicPartition, int], KafkaClientError | None]:
        """One request per leader; returns the specs to retry and the last retriable error."""
        by_leader: dict[int, dict[TopicPartition, tuple[int, int]]] = {}
        for tp, spec in specs.items():
            leader, epoch = self._leader_and_epoch(tp)
            by_leader.setdefault(leader, {})[tp] = (spec, epoch)
        retry: dict[TopicPartition, int] = {}
        last_error: KafkaClientError | None = None
        for leader, part in by_leader.items():
            floor = min_list_offsets_version((s for s, _ in part.values()), iso)
            with self._lock:
                try:
                    conn = self.connection(leader)
                    version = conn.versions.pick(
                        _LIST_OFFSETS, floor, why="timestamps need v1, read_committed v2, max timestamp v7"
                    )
                    self.stats["list_offsets_requests"] += 1
                    response = self._call(conn, _LIST_OFFSETS, list_offsets_request(part, iso), version=version)
                except KafkaClientError as e:
                    if not e.retriable:
                        raise
                    last_error = e
                    retry.update({tp: spec for tp, (spec, _) in part.items()})
                    continue
            try:
                error = collect_list_offsets(
                    part, parse_list_offsets(response, version), conn.peer, result, retry, self.metadata
                )
            except KafkaClientError as e:
                self.name_principal(e)
                raise
            last_error = error or last_error
        return retry, last_error


def topic_status(metadata: MetadataCache, topic: str) -> tuple[TopicInfo | None, ErrorCode]:
    """``(info, NONE)`` when the metadata has ``topic`` without error, else ``(None, its error)``
    (UNKNOWN_TOPIC_OR_PARTITION when it is not there)."""
    info = metadata.topic(topic)
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if info is None else ErrorCode(info.error_code)
    return (info if code == ErrorCode.NONE else None), code


def topic_wait_plan(plan: RetryPlan, code: ErrorCode) -> RetryPlan:
    """How long ``topic_info`` asks again: a topic being created (LEADER_NOT_AVAILABLE) within the plan's
    deadline, an unknown topic (metadata propagating between brokers) three more times at most."""
    if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        plan.retries = min(plan.retries, 3)
    return plan


def topic_error(code: int, topic: str) -> KafkaClientError:
    """The error ``topic_info`` raises when the topic stays unknown or failed (not retriable: it was retried)."""
    error = error_for_code(code, "Metadata", topic=topic)
    error.retriable = False
    return error


def partition_leader(info: TopicInfo, tp: TopicPartition, metadata: MetadataCache) -> tuple[int, int]:
    """``(leader, leader epoch)`` of ``tp`` in its topic's fresh ``info``: UNKNOWN_TOPIC_OR_PARTITION (not
    retriable) naming the partition count when the topic has no such partition; LEADER_NOT_AVAILABLE
    (retriable; the topic's metadata invalidated) while it has no leader."""
    p = info.partitions.get(tp.partition)
    if p is None:
        raise KafkaClientError(
            f"partition {tp.partition} of topic {tp.topic} does not exist "
            f"(the topic has {len(info.partitions)} partitions)",
            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            retriable=False,
            topic=tp.topic,
            partition=tp.partition,
        )
    if p.leader < 0:
        metadata.invalidate(tp.topic)
        raise error_for_code(ErrorCode.LEADER_NOT_AVAILABLE, "leader lookup", topic=tp.topic, partition=tp.partition)
    return p.leader, p.leader_epoch


def collect_list_offsets(
    part: Mapping[TopicPartition, tuple[int, int]],
    answers: Mapping[TopicPartition, Any],
    peer: str,
    result: dict[TopicPartition, tuple[int, int]],
    retry: dict[TopicPartition, int],
    metadata: MetadataCache,
) -> KafkaClientError | None:
    """Sort one broker's ListOffsets answers (``offsets.parse_list_offsets``) to the ``{tp: (spec, epoch)}``
    it was asked: ``(offset, timestamp)`` into ``result``, partitions to ask again (omitted, or a retriable
    error; the topic's metadata is invalidated for ``REFRESH_METADATA_ERRORS``) into ``retry`` with their
    spec. Returns the last retriable error; raises a partition's non-retriable error."""
    last_error: KafkaClientError | None = None
    for tp, (spec, _) in part.items():
        answer = answers.get(tp)
        if answer is None:
            last_error = KafkaClientError(f"ListOffsets response of broker {peer} omits {tp}", retriable=True)
            retry[tp] = spec
            continue
        if answer.error_code:
            error = error_for_code(
                answer.error_code, "ListOffsets", broker=peer, topic=tp.topic, partition=tp.partition
            )
            if not error.retriable:
                raise error
            if answer.error_code in REFRESH_METADATA_ERRORS:
                metadata.invalidate(tp.topic)
            last_error = error
            retry[tp] = spec
            continue
        result[tp] = (answer.offset, answer.timestamp)
    return last_error
