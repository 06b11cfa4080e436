"""``AsyncKafkaClient``: the asyncio client core - connections to every broker, metadata, ListOffsets, Fetch,
FindCoordinator - that ``AIOProducer``, ``AIOConsumer`` and ``AIOAdminClient`` sit on.

It behaves as the blocking ``KafkaClient`` (``spark_kafkalog.client.core.client``) and shares its pure parts:
the same ``ClientConfig`` built from the same arguments (``client_config``), ``MetadataCache`` and
``metadata_request``, ``RetryPlan``, ListOffsets (``core.offsets``, ``collect_list_offsets``), Fetch
(``client_fetch.FetchRange``, ``fetcher``), FindCoordinator (``core.coordinator``) and the pool's bookkeeping
(``network.pool.PoolBookkeeping``). One ``AsyncKafkaConnection`` per broker, opened on first use with
ApiVersions negotiated per connection and TLS/SASL from ``ClientConfig.security()``; bootstrap connections
serve until the first Metadata answer names the brokers. Requests go at the highest version both sides
support (a version the broker does not advertise is never sent) unless one is given.

Versions: Metadata up to v13 (a v13 top-level error such as REBOOTSTRAP_REQUIRED drops the connection and is
raised), ListOffsets v0+ (v1 for timestamps, v2 read_committed, v7 max timestamp), Fetch v0-12 by topic name
and v13+ by topic id when the metadata knows it (v4+ under read_committed), FindCoordinator v0-3 one key and
v4+ batched (KIP-699; v1+ for transactional ids).

Failure handling (``retries``, ``retry.backoff.ms`` .. ``retry.backoff.max.ms``, bounded by
``default.api.timeout.ms``): partition errors of ``errors.REFRESH_METADATA_ERRORS`` invalidate the topic's
metadata and are retried against the (possibly new) leader; other retriable errors back off and retry; a lost
or timed-out connection is closed and dropped (the metadata of what its broker led is invalidated) and the
call retried on a fresh connection. ``send_request`` itself does not retry: wrap it in ``call_with_retries``.

Concurrency: one event loop. Every method is a coroutine (or async generator) of the loop that called
``start`` (or first used the client); connections are shared per broker by every coroutine using the client
(requests are pipelined on them; each broker's connection is opened under its own lock), and concurrent Metadata
requests for the same topics share one request; none of it is thread-safe. Closing the client fails the requests
in flight.

    async with AsyncKafkaClient("localhost:9092") as client:
        tp = TopicPartition("events", 0)
        end = (await client.list_offsets({tp: OffsetSpec.LATEST}))[tp]
        async for fetched in client.fetch_batches(tp, 0, end):
            records = fetched.batch.records()
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.core.client import (
    client_config,
    collect_list_offsets,
    partition_leader,
    topic_error,
    topic_status,
    topic_wait_plan,
)
from spark_kafkalog.client.core.coordinator import (
    GROUP_KEY_TYPE,
    TRANSACTION_KEY_TYPE,
    FoundCoordinator,
    coordinator_error,
    find_coordinator_request,
    parse_find_coordinator,
)
from spark_kafkalog.client.core.offsets import (
    check_spec,
    list_offsets_request,
    min_list_offsets_version,
    parse_list_offsets,
)
from spark_kafkalog.client.core.read_replicas import PreferredReadReplicas
from spark_kafkalog.client.errors import (
    REFRESH_METADATA_ERRORS,
    KafkaClientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    error_for_code,
)
from spark_kafkalog.client.metadata import MetadataCache, TopicInfo, metadata_request
from spark_kafkalog.client.network.asyncio_transport import AsyncKafkaConnection
from spark_kafkalog.client.network.retry import RetryPlan, gave_up
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ApiKey, ErrorCode

from ._pool import AsyncConnectionPool
from .fetch_batches import AsyncFetchMixin, FetchBatches
from .retrying import sleep_or_give_up

__all__ = ["AsyncKafkaClient", "FetchBatches", "sleep_or_give_up"]

T = TypeVar("T")

_METADATA = int(ApiKey.METADATA)
_FETCH = int(ApiKey.FETCH)
_LIST_OFFSETS = int(ApiKey.LIST_OFFSETS)
_FIND_COORDINATOR = int(ApiKey.FIND_COORDINATOR)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a shared future's error as seen (every waiter may have been cancelled)."""
    if not future.cancelled():
        future.exception()


class AsyncKafkaClient(AsyncFetchMixin):
    """asyncio Kafka client core (see the module docstring).

    ``AsyncKafkaClient("host:9092", request_timeout_ms=5000)``, ``AsyncKafkaClient({"bootstrap.servers": ...})``
    or ``AsyncKafkaClient("host:9092", config=ClientConfig(...))``; the settings are those of ``KafkaClient``.
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        *,
        config: Mapping[str, Any] | ClientConfig | None = None,
        _producer: bool = False,
        **settings: Any,
    ) -> None:
        self.config: ClientConfig = client_config(bootstrap_servers, config, **settings)
        self._producer = _producer
        self.metadata = MetadataCache(self.config.metadata_max_age_ms)
        self.read_replicas = PreferredReadReplicas(self.config.metadata_max_age_ms)
        """Partitions fetched from a preferred read replica (KIP-392) rather than their leader."""
        self.stats: dict[str, Any] = self.new_stats()
        self._pool: AsyncConnectionPool | None = None
        self._refreshing: dict[tuple[str, ...] | None, asyncio.Future[None]] = {}  # Metadata requests in flight
        self._closed = False

    # lifecycle ---------------------------------------------------------------------------------
    @property
    def pool(self) -> AsyncConnectionPool:
        """The connection pool (created on the running loop at first use)."""
        if self._pool is None:
            self._pool = AsyncConnectionPool(self.config, self.metadata)
        return self._pool

    async def start(self) -> None:
        """Connect to the cluster and learn its brokers (Metadata for no topic), retrying within
        ``default.api.timeout.ms``; raises ``BrokerNotAvailableError`` naming the addresses tried."""
        self._check_open()
        await self.refresh_metadata([])

    async def close(self) -> None:
        """Close every connection (requests in flight fail). Idempotent."""
        self._closed = True
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> AsyncKafkaClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # connections -------------------------------------------------------------------------------
    async def connection(self, node_id: int) -> AsyncKafkaConnection:
        """The open connection to broker ``node_id`` (connecting on first use; the metadata is refreshed
        first when it does not know the broker)."""
        self._check_open()
        if self.pool.get(node_id) is None and self.metadata.broker(node_id) is None:
            await self.refresh_metadata_once(None)
        return await self.pool.connection(node_id)

    async def any_connection(self) -> AsyncKafkaConnection:
        """An open connection to some broker: an existing one, a known broker, or a bootstrap server."""
        self._check_open()
        return await self.pool.any_connection()

    async def drop(self, conn: AsyncKafkaConnection, reason: BaseException | None = None) -> None:
        """Close and forget ``conn`` (e.g. after it failed); the next request to its broker reconnects."""
        await self.pool.drop(conn, reason)

    async def _call(
        self, conn: AsyncKafkaConnection, api_key: int, body: Any, *, timeout_ms: int | None = None, **kwargs: Any
    ) -> Any:
        """One request on ``conn``; a broken connection is dropped before the error propagates."""
        self.stats["requests"] += 1
        timeout = (self.config.request_timeout_ms if timeout_ms is None else timeout_ms) / 1000.0
        try:
            return await conn.request(api_key, body, timeout=timeout, **kwargs)
        except (KafkaConnectionError, KafkaTimeoutError) as e:
            await self.drop(conn, e)
            raise

    async def send_request(
        self,
        node_id: int | None,
        api_key: int,
        body: Any | Callable[[int], Any],
        *,
        version: int | None = None,
        min_version: int = 0,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Any:
        """Send one request to broker ``node_id`` (any broker when ``None``) and return the response body.

        The version is ``version`` when given, else the highest both sides support within
        ``[min_version, max_version]`` (``NoCommonVersionError`` when none); ``body`` may be a function of
        that version. A lost or timed-out connection is dropped and the error raised (not retried: see
        ``call_with_retries``).
        """
        return (
            await self.send_request_versioned(
                node_id,
                api_key,
                body,
                version=version,
                min_version=min_version,
                max_version=max_version,
                timeout_ms=timeout_ms,
            )
        )[1]

    async def send_request_versioned(
        self,
        node_id: int | None,
        api_key: int,
        body: Any | Callable[[int], Any],
        *,
        version: int | None = None,
        min_version: int = 0,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[int, Any]:
        """``send_request`` returning ``(version, response body)``, for answers whose shape depends on it."""
        conn = await (self.any_connection() if node_id is None else self.connection(node_id))
        if version is None:
            version = conn.versions.pick(api_key, min_version, max_version)
        else:
            version = conn.versions.pick(api_key, version, version)
        if callable(body):
            body = body(version)
        return version, await self._call(conn, api_key, body, version=version, timeout_ms=timeout_ms)

    async def call_with_retries(
        self, coro_fn: Callable[[], Awaitable[T]], *, what: str, timeout_ms: int | None = None
    ) -> T:
        """Await ``coro_fn()`` until it returns, retrying retriable ``KafkaClientError``s with backoff (the
        topic of a ``REFRESH_METADATA_ERRORS`` error is marked for a metadata refresh first); the error that
        ends the retries says what was attempted, how often and for how long."""
        plan = self.retry_plan(timeout_ms)
        while True:
            try:
                return await coro_fn()
            except KafkaClientError as e:
                if not e.retriable:
                    self.name_principal(e)
                    raise
                if e.error_code is not None and e.error_code in REFRESH_METADATA_ERRORS and e.topic:
                    self.metadata.invalidate(e.topic)
                self.stats["retries"] += 1
                if not await sleep_or_give_up(plan):
                    e.add_context(gave_up(what, plan))
                    raise

    # metadata ----------------------------------------------------------------------------------
    async def refresh_metadata_once(self, topics: Iterable[str] | None) -> None:
        """One Metadata request for ``topics`` (every topic when ``None``), no retries. Coroutines asking for
        the same topics while a request for them is in flight share its answer (or its error) instead of
        sending their own: a thousand sends to a new topic make one Metadata request, not a thousand."""
        names = None if topics is None else sorted(set(topics))
        key = None if names is None else tuple(names)
        shared = self._refreshing.get(key)
        if shared is None:
            shared = asyncio.ensure_future(self._refresh_metadata(names))
            self._refreshing[key] = shared
            shared.add_done_callback(lambda done: self._refreshing.pop(key, None))
            shared.add_done_callback(_retrieve)
        await asyncio.shield(shared)

    async def _refresh_metadata(self, names: list[str] | None) -> None:
        conn = await self.any_connection()
        version = conn.versions.pick(_METADATA)
        body = metadata_request(version, names, self.config.auto_create_topics(producer=self._producer))
        self.stats["metadata_requests"] += 1
        response = await self._call(conn, _METADATA, body, version=version)
        error = getattr(response, "error_code", ErrorCode.NONE)  # v13+: a top-level error (KIP-1102)
        if error != ErrorCode.NONE:
            # REBOOTSTRAP_REQUIRED and the rest: this broker's answer is not used; the connection is dropped so
            # the next attempt asks another broker (or a bootstrap server)
            await self.drop(conn)
            raise error_for_code(error, "Metadata")
        self.metadata.update(response, all_topics=names is None)

    async def refresh_metadata(self, topics: Iterable[str] | None = None) -> None:
        """Fetch metadata for ``topics`` (every topic when ``None``), retrying connection failures."""
        names = None if topics is None else list(topics)
        await self.call_with_retries(lambda: self.refresh_metadata_once(names), what="Metadata")

    async def topic_info(self, topic: str, *, refresh: bool = False, timeout_ms: int | None = None) -> TopicInfo:
        """Current metadata of ``topic`` (as ``KafkaClient.topic_info``): a topic being created
        (LEADER_NOT_AVAILABLE) is waited for up to ``timeout_ms``; an unknown topic is asked for three more
        times with backoff, then raises ``KafkaClientError`` with UNKNOWN_TOPIC_OR_PARTITION."""
        if refresh or self.metadata.needs_refresh(topic):
            await self.refresh_metadata([topic])
        plan: RetryPlan | None = None
        while True:
            info, code = topic_status(self.metadata, topic)
            if info is not None:
                return info
            if code not in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE):
                break
            if plan is None:
                plan = topic_wait_plan(self.retry_plan(timeout_ms), code)
            if not await sleep_or_give_up(plan):
                break
            self.stats["retries"] += 1
            await self.refresh_metadata([topic])
        error = topic_error(code, topic)
        self.name_principal(error)
        raise error

    async def topics(self, *, include_internal: bool = False) -> dict[str, int]:
        """Every topic of the cluster with its partition count (always asks a broker)."""
        await self.refresh_metadata(None)
        return {
            name: len(info.partitions)
            for name, info in sorted(self.metadata.topics().items())
            if not info.error_code and (include_internal or not info.is_internal)
        }

    async def partitions_for(self, topic: str) -> list[int]:
        """Partition ids of ``topic``, sorted."""
        return sorted((await self.topic_info(topic)).partitions)

    async def leader_for(self, tp: TopicPartition) -> int:
        """Node id of the partition's leader, waiting (with backoff) while it has none."""
        return (await self.leader_and_epoch(tp))[0]

    async def leader_and_epoch(self, tp: TopicPartition) -> tuple[int, int]:
        """``(leader node id, leader epoch)`` of the partition, waiting (with backoff) while it has none; a
        partition the topic does not have raises UNKNOWN_TOPIC_OR_PARTITION (not retriable)."""
        tp = TopicPartition(*tp)

        async def lookup() -> tuple[int, int]:
            info = await self.topic_info(tp.topic)
            if tp.partition not in info.partitions:  # new partitions: ask again before saying it does not exist
                info = await self.topic_info(tp.topic, refresh=True)
            return partition_leader(info, tp, self.metadata)

        return await self.call_with_retries(lookup, what=f"leader of {tp}")

    def topic_id(self, topic: str) -> uuid.UUID | None:
        """``topic``'s id in the metadata (Metadata v10+), None when unknown."""
        info = self.metadata.topic(topic)
        return uuid.UUID(info.topic_id) if info is not None and info.topic_id else None

    # ListOffsets -------------------------------------------------------------------------------
    async def list_offsets(
        self, specs: Mapping[TopicPartition, int], *, isolation_level: int | None = None
    ) -> dict[TopicPartition, int]:
        """Offsets for ``{tp: spec}`` (``OffsetSpec`` or a timestamp), as ``KafkaClient.list_offsets``: -2
        earliest, -1 latest (the last stable offset under read_committed), -3 max timestamp, a timestamp >= 0
        the earliest offset whose timestamp is >= it, else the latest offset."""
        result = await self.list_offsets_with_timestamps(specs, isolation_level=isolation_level)
        return {tp: offset for tp, (offset, _) in result.items()}

    async def list_offsets_with_timestamps(
        self,
        specs: Mapping[TopicPartition, int],
        *,
        isolation_level: int | None = None,
        no_match: str = "latest",
    ) -> dict[TopicPartition, tuple[int, int]]:
        """``{tp: (offset, timestamp)}`` for ``{tp: spec}`` (as ``KafkaClient.list_offsets_with_timestamps``;
        ``no_match="raw"`` keeps Kafka's ``(-1, -1)`` where no record has a timestamp >= the spec)."""
        if no_match not in ("latest", "raw"):
            raise ValueError(f"no_match must be 'latest' or 'raw', not {no_match!r}")
        iso = self.config.isolation_level if isolation_level is None else isolation_level
        checked = {TopicPartition(*tp): check_spec(TopicPartition(*tp), spec) for tp, spec in specs.items()}
        result: dict[TopicPartition, tuple[int, int]] = {}
        remaining = dict(checked)
        plan = self.retry_plan()
        while remaining:
            remaining, last_error = await self._list_offsets_round(remaining, iso, result)
            if remaining:
                self.stats["retries"] += 1
                if not await sleep_or_give_up(plan):
                    assert last_error is not None
                    last_error.add_context(gave_up("ListOffsets", plan))
                    raise last_error
        if no_match == "latest":
            unmatched = {tp: OffsetSpec.LATEST for tp, spec in checked.items() if spec >= 0 and result[tp][0] < 0}
            if unmatched:
                latest = await self.list_offsets_with_timestamps(unmatched, isolation_level=iso, no_match="raw")
                for tp, (offset, _) in latest.items():
                    result[tp] = (offset, -1)
        return result

    async def _list_offsets_round(
        self, specs: Mapping[TopicPartition, int], iso: int, result: dict[TopicPartition, tuple[int, int]]
    ) -> tuple[dict[TopicPartition, int], KafkaClientError | None]:
        """One request per leader, sent concurrently; returns the specs to retry and the last retriable
        error."""
        by_leader: dict[int, dict[TopicPartition, tuple[int, int]]] = {}
        for tp, spec in specs.items():
            leader, epoch = await self.leader_and_epoch(tp)
            by_leader.setdefault(leader, {})[tp] = (spec, epoch)
        retry: dict[TopicPartition, int] = {}

        async def ask(leader: int, part: dict[TopicPartition, tuple[int, int]]) -> KafkaClientError | None:
            floor = min_list_offsets_version((s for s, _ in part.values()), iso)
            try:
                conn = await self.connection(leader)
                version = conn.versions.pick(
                    _LIST_OFFSETS, floor, why="timestamps need v1, read_committed v2, max timestamp v7"
                )
                self.stats["list_offsets_requests"] += 1
                response = await self._call(conn, _LIST_OFFSETS, list_offsets_request(part, iso), version=version)
            except KafkaClientError as e:
                if not e.retriable:
                    raise
                retry.update({tp: spec for tp, (spec, _) in part.items()})
                return e
            try:
                return collect_list_offsets(
                    part, parse_list_offsets(response, version), conn.peer, result, retry, self.metadata
                )
            except KafkaClientError as e:
                self.name_principal(e)
                raise

        errors = await asyncio.gather(*(ask(leader, part) for leader, part in by_leader.items()))
        last_error = next((e for e in reversed(errors) if e is not None), None)
        return retry, last_error

    # coordinators ------------------------------------------------------------------------------
    async def find_coordinator(self, key: str, key_type: int = GROUP_KEY_TYPE) -> int:
        """Node id of the coordinator of ``key`` (``key_type`` 0: a group id, 1: a transactional id, which
        needs FindCoordinator v1+), asked of any broker with retries (COORDINATOR_NOT_AVAILABLE while it
        loads, lost connections); the metadata is refreshed when it does not know the answered broker."""

        async def attempt() -> int:
            found = await self.find_coordinator_once(key, key_type)
            if found.error_code != ErrorCode.NONE:
                error = coordinator_error(found, key)
                self.name_principal(error)
                raise error
            return found.node_id

        return await self.call_with_retries(attempt, what=f"FindCoordinator for {key!r}")

    async def find_coordinator_once(self, key: str, key_type: int = GROUP_KEY_TYPE) -> FoundCoordinator:
        """One FindCoordinator to any broker, its answer unchecked (the caller words the error); when it names
        a broker the metadata does not know, the brokers are refreshed first."""
        version, response = await self.send_request_versioned(
            None,
            _FIND_COORDINATOR,
            lambda v: find_coordinator_request(v, key, key_type),
            min_version=1 if key_type == TRANSACTION_KEY_TYPE else 0,
        )
        found = parse_find_coordinator(version, response, key)
        if found.error_code == ErrorCode.NONE and self.metadata.broker(found.node_id) is None:
            await self.refresh_metadata_once([])
        return found
