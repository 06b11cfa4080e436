"""``AIOConsumer``: Kafka's consumer on asyncio, by manual assignment or as a member of a consumer group, with the
configuration and semantics of the blocking ``Consumer``.

``AIOConsumer("host:9092", group_id="g", auto_offset_reset="earliest")`` (the blocking ``Consumer``'s arguments:
the bootstrap servers or a settings mapping / ``ClientConfig``, ``config=``, and the dotted or snake_case settings)
or, as aiokafka, ``AIOConsumer("topic-a", "topic-b", bootstrap_servers="host:9092", group_id="g")``: topics given
positionally are subscribed by ``start``. Then ``await start()`` (or ``async with``), ``assign`` or ``subscribe``,
and ``await poll(timeout_ms, max_records)`` (a list of ``ConsumerRecord``, as the blocking ``poll``),
``await getone()`` or ``async for record in consumer``.

Positions and fetching: a partition without a position starts at the group's committed offset (with a ``group.id``),
else per ``auto.offset.reset`` (``latest``, ``earliest``, ``none`` raises); an offset that fell out of the log is
reset the same way. Each poll round sends one Fetch per leader for the assigned, not paused partitions whose buffer
is empty (``fetching.fetch_round``; by topic id when the metadata knows it, read_committed skipping aborted
transactions and moving past markers), the first round without waiting, later ones long-polling until the
timeout.

Groups (``subscribe``): ``group.protocol=classic`` is driven by ``AsyncConsumerCoordinator`` (JoinGroup on a client
of its own so the wait never blocks fetches; a heartbeat task), ``consumer`` (KIP-848) by ``AsyncMembershipManager``.
Rebalance listeners are objects with any of ``on_partitions_revoked``, ``on_partitions_assigned`` and
``on_partitions_lost`` (revoked when absent); each may be a plain function or a coroutine function (awaited). They
run from ``poll`` (and ``close``/``unsubscribe``) in order, before the next group request; revoked partitions'
positions are committed first with ``enable.auto.commit``, and partitions leave the assignment only after their
callback ran.

Committed offsets: ``await commit()`` (positions, or given offsets; as a member with its generation or epoch,
``CommitFailedError`` when the group moved on; ``asynchronous=True``/``commit_async`` in a task, with a callback),
``await committed(partitions)``; ``enable.auto.commit`` commits every
``auto.commit.interval.ms`` from ``poll``, on revocation and on ``close``; ``offsets.storage``/``dual.commit.enabled``
as the blocking consumer. ``close`` leaves the group (a static member, ``group.instance.id``, does not send
LeaveGroup).

Concurrency: one event loop; one task polls at a time (as Java's consumer is used from one thread).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.aio.client import AsyncKafkaClient
from spark_kafkalog.client.aio.fetching import fetch_round
from spark_kafkalog.client.aio.group_calls import AsyncGroupCalls
from spark_kafkalog.client.aio.group_coordinator import AsyncConsumerCoordinator
from spark_kafkalog.client.aio.membership import AsyncMembershipManager
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.assignment_state import AssignmentState
from spark_kafkalog.client.consumer.consumer_parts import (
    COMMIT_FAILED_CODES,
    check_can_subscribe,
    commit_failed,
    deserializers,
    listener_method,
    merge_committed,
    not_a_member,
    offset_stores,
    offsets_to_commit,
    parse_subscription,
    records_of,
    reset_spec,
)
from spark_kafkalog.client.consumer.consumer_views import ConsumerViews
from spark_kafkalog.client.consumer.group_membership import RebalanceEvent
from spark_kafkalog.client.core.client import client_config
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.serialization import SerializationError
from spark_kafkalog.client.types import ConsumerRecord, OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = ["AIOConsumer"]

log = logging.getLogger("kafkalog.consumer")

_IDLE_STEP = 0.1  # seconds between looks while a member has nothing to fetch
CommitCallback = Callable[[Mapping[TopicPartition, OffsetAndMetadata], BaseException | None], Any]
"""``callback(offsets, error or None)`` after a commit; a plain function or a coroutine function."""


async def _call(callback: Callable[..., Any], *args: Any) -> None:
    """Call ``callback``; await what it returns when that is awaitable (a coroutine function's result)."""
    result = callback(*args)
    if inspect.isawaitable(result):
        await result


class AIOConsumer(ConsumerViews):
    """The asyncio consumer (see the module docstring); an async context manager and an async iterator."""

    def __init__(
        self,
        *topics: str,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        if bootstrap_servers is None and topics:  # AIOConsumer("host:9092", ...), as the blocking Consumer
            bootstrap_servers, topics = topics[0], ()
        cfg = client_config(bootstrap_servers, config, **kwargs)
        self.config = cfg
        self.client = AsyncKafkaClient(None, config=cfg)
        self._initial_topics = topics
        self._deserialize_key, self._deserialize_value = deserializers(cfg)
        self._state = AssignmentState()
        self._serialization_error: SerializationError | None = None  # raised once the records before it are out
        self._groups = AsyncGroupCalls(self.client)
        self._next = 0  # the partition whose buffer is taken first next (round robin)
        self._async_commits: set[asyncio.Task[None]] = set()
        self._last_auto_commit = time.monotonic()
        self._coordinator: AsyncConsumerCoordinator | AsyncMembershipManager | None = None
        self._topics: tuple[str, ...] = ()
        self._patterns: list[Any] = []
        self._regex: str | None = None
        self._listener: Any = None
        self._next_metadata_check = 0.0
        self._partition_counts: dict[str, int] = {}
        self._started = False
        self._closed = False

    # lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect (bootstrap metadata) and subscribe to the topics given to the constructor. Idempotent."""
        if self._started:
            return
        self._started = True
        await self.client.start()
        if self._initial_topics:
            self.subscribe(self._initial_topics)

    async def close(self) -> None:
        """Commit (with auto commit), leave the group (revocation callbacks run here) and close the connections."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._async_commits:
                await asyncio.gather(*self._async_commits, return_exceptions=True)
            if self._coordinator is not None:
                await self._coordinator.leave()  # the revocation commits positions with auto commit
            elif self._auto_commits:
                await self.commit()
        finally:
            if self._coordinator is not None:
                await self._coordinator.close()
            await self.client.close()

    async def __aenter__(self) -> AIOConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> AsyncIterator[ConsumerRecord]:
        return self

    async def __anext__(self) -> ConsumerRecord:
        """The next record (waits until one comes); ends when the consumer is closed."""
        if self._closed:
            raise StopAsyncIteration
        return await self.getone()

    async def getone(self) -> ConsumerRecord:
        """The next record, waiting as long as it takes."""
        while True:
            records = await self.poll(timeout_ms=1000, max_records=1)
            if records:
                return records[0]

    # committed offsets ------------------------------------------------------------------------------
    async def commit(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        *,
        asynchronous: bool = False,
        callback: CommitCallback | None = None,
    ) -> None:
        """Commit ``offsets`` (by default the position of every assigned partition that has one) for the group.
        A member commits with its generation (classic) or epoch (consumer protocol): ``CommitFailedError`` when the
        group rebalanced meanwhile (the next ``poll`` rejoins). ``callback(offsets, error or None)`` (a plain or
        coroutine function) runs once the commit ended; ``asynchronous=True`` returns at once, the commit going on
        in a task of the loop (``close`` waits for it), as the blocking ``Consumer.commit``."""
        group = self._group()
        if offsets is None:
            offsets = self._state.committable()
        wanted = offsets_to_commit(offsets)
        self._last_auto_commit = time.monotonic()
        if not asynchronous:
            error: BaseException | None = None
            try:
                await self._commit_now(group, wanted)
            except Exception as e:
                error = e
            if callback is not None:
                await _call(callback, wanted, error)
            if error is not None:
                raise error
            return
        task = asyncio.get_running_loop().create_task(self._commit_reporting(group, wanted, callback))
        self._async_commits.add(task)
        task.add_done_callback(self._async_commits.discard)

    async def commit_async(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        callback: CommitCallback | None = None,
    ) -> None:
        """``commit(offsets, asynchronous=True, callback=callback)`` (kafka-python's and Java's name)."""
        await self.commit(offsets, asynchronous=True, callback=callback)

    async def _commit_reporting(
        self, group: str, offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback | None
    ) -> None:
        error: BaseException | None = None
        try:
            await self._commit_now(group, offsets)
        except Exception as e:  # reported to the callback
            error = e
        if callback is not None:
            try:
                await _call(callback, offsets, error)
            except Exception:
                log.exception("commit callback failed")
        elif error is not None:
            log.warning("asynchronous commit of %d offsets failed: %s", len(offsets), error)

    async def _commit_now(self, group: str, wanted: dict[TopicPartition, OffsetAndMetadata]) -> None:
        if not wanted:
            return
        storage, dual = self.config.offsets_storage, self.config.dual_commit_enabled
        if storage == "zookeeper" or dual:
            await self._groups.commit_offsets(group, wanted, storage="zookeeper")
        if storage == "zookeeper" and not dual:
            return
        coordinator = self._coordinator
        if coordinator is None:
            await self._groups.commit_offsets(group, wanted)
            return
        if isinstance(coordinator, AsyncMembershipManager):
            await coordinator.commit_offsets(self._groups, wanted)
            return
        generation, member_id, instance_id = coordinator.member.commit_identity()
        if generation < 0:
            raise not_a_member(group)
        try:
            await self._groups.commit_offsets(
                group, wanted, generation=generation, member_id=member_id, group_instance_id=instance_id
            )
        except KafkaClientError as e:
            if e.error_code not in COMMIT_FAILED_CODES:
                raise
            coordinator.member.on_commit_error(e.error_code)
            raise commit_failed(group, e.error_code) from e

    async def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offset of each partition (None where nothing was committed)."""
        tps = [TopicPartition(*tp) for tp in partitions]
        found = await self._fetch_committed(self._group(), tps)
        return {tp: found.get(tp) for tp in tps}

    async def _fetch_committed(self, group: str, tps: list[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        found: dict[TopicPartition, OffsetAndMetadata] = {}
        for storage in offset_stores(self.config):
            if storage == "kafka" and isinstance(self._coordinator, AsyncMembershipManager):
                stored = await self._coordinator.fetch_committed(self._groups, tps)
            else:
                stored = await self._groups.list_group_offsets(group, tps, storage=storage)
            merge_committed(found, stored)
        return found

    async def _maybe_auto_commit(self) -> None:
        interval = self.config.auto_commit_interval_ms / 1000
        if self._auto_commits and time.monotonic() - self._last_auto_commit >= interval:
            await self._auto_commit(self._state.assigned)

    async def _auto_commit(self, partitions: list[TopicPartition]) -> None:
        offsets = self._state.committable(partitions)
        try:
            await self.commit(offsets)
        except KafkaClientError as e:  # as Java: an auto commit that fails is logged, the next one may succeed
            log.warning("group %s: auto commit of %d offsets failed: %s", self.config.group_id, len(offsets), e)

    # subscription -----------------------------------------------------------------------------------
    def subscribe(
        self,
        topics: str | Iterable[str] = (),
        pattern: str | re.Pattern[str] | None = None,
        listener: Any = None,
    ) -> None:
        """Join the consumer group ``group.id`` for ``topics`` and/or the topics matching ``pattern`` (as the
        blocking ``Consumer.subscribe``); the assignment follows at the next ``poll``. Subscribing to nothing
        needs ``await unsubscribe()`` instead."""
        check_can_subscribe(self.config.group_id, self._coordinator is not None, bool(self._state.assigned))
        spec = parse_subscription(topics, pattern)
        if spec.empty:
            raise KafkaClientError("subscribe to at least one topic or pattern (or await unsubscribe())")
        self._topics, self._patterns, self._regex = spec
        self._listener = listener
        if self._coordinator is None and self.config.group_protocol == "consumer":
            self._coordinator = AsyncMembershipManager(self.config, self.client, self._on_rebalance)
        elif self._coordinator is None:
            self._coordinator = AsyncConsumerCoordinator(self.config, self._partition_counts_of, self._on_rebalance)
        self._next_metadata_check = 0.0
        if isinstance(self._coordinator, AsyncMembershipManager):
            self._coordinator.member.subscribe(self._topics, self._regex)
        elif not self._patterns:  # patterns are resolved against the metadata by the next poll
            self._coordinator.member.subscribe(self._topics)

    async def unsubscribe(self) -> None:
        """Leave the group (revocation callbacks run) and drop the assignment."""
        coordinator, self._coordinator = self._coordinator, None
        if coordinator is not None:
            try:
                await coordinator.leave("the consumer unsubscribed")
            finally:
                await coordinator.close()
        self._topics, self._patterns, self._regex = (), [], None
        self._state.assign([])

    async def _check_metadata(self) -> None:
        """Every ``metadata.max.age.ms`` (classic protocol): resolve patterns, and rejoin when a subscribed topic's
        partition count changed, as the blocking consumer does."""
        coordinator = self._coordinator
        if isinstance(coordinator, AsyncMembershipManager):  # the coordinator resolves regexes and partitions
            coordinator.member.subscribe(self._topics, self._regex)
            return
        now = time.monotonic()
        if coordinator is None or now < self._next_metadata_check:
            return
        self._next_metadata_check = now + self.config.metadata_max_age_ms / 1000
        topics = set(self._topics)
        if self._patterns:
            for name in await self.client.topics():
                if any(match(name) for match in self._patterns):
                    topics.add(name)
        member = coordinator.member
        member.subscribe(topics)
        counts = await self._partition_counts_of(tuple(sorted(topics)))
        if self._partition_counts and counts != self._partition_counts and member.stable:
            member.request_rejoin()
        self._partition_counts = counts

    async def _partition_counts_of(self, topics: tuple[str, ...]) -> dict[str, int]:
        counts = {}
        for topic in topics:
            try:
                counts[topic] = len((await self.client.topic_info(topic, refresh=True)).partitions)
            except KafkaClientError as e:  # not created yet: assigned once it exists
                if e.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                    raise
                log.debug("topic %s has no partitions to assign: %s", topic, e)
        return counts

    async def _on_rebalance(self, events: list[RebalanceEvent]) -> None:
        """Run rebalance callbacks in order (coroutines awaited); partitions leave the assignment only after their
        callback ran, so the listener may still commit their positions. Cancelled part way (the poll was), the
        assignment still follows every event; the callbacks not run are skipped."""
        coordinator = self._coordinator
        assert coordinator is not None
        for i, event in enumerate(events):
            partitions = list(event.partitions)
            try:
                if event.kind == "revoked" and self.config.enable_auto_commit and self.config.group_id is not None:
                    await self._auto_commit(partitions)
                if event.kind == "assigned":
                    self._state.assign(list(coordinator.member.owned))
                    await self._call_listener(event)
                else:
                    await self._call_listener(event)
                    self._state.remove(partitions)
            except asyncio.CancelledError:
                for skipped in events[i:]:
                    if skipped.kind == "assigned":
                        self._state.assign(list(coordinator.member.owned))
                    else:
                        self._state.remove(skipped.partitions)
                raise

    async def _call_listener(self, event: RebalanceEvent) -> None:
        method = listener_method(self._listener, event)
        if method is None:
            return
        try:
            await _call(method, list(event.partitions))
        except Exception:  # as Java: a failing callback is logged; the rebalance goes on
            log.exception("rebalance listener %s failed", getattr(method, "__name__", event.kind))

    # assignment and positions -----------------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Replace the assignment; positions of partitions kept in it are kept. A partition that does not exist
        fails the next ``poll``."""
        if self._coordinator is not None:
            raise KafkaClientError(
                "assign() and subscribe() are mutually exclusive; unsubscribe() first", retriable=False
            )
        self._state.assign(list(dict.fromkeys(TopicPartition(*tp) for tp in partitions)))

    async def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        await self._seek_to(OffsetSpec.EARLIEST, partitions)

    async def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        await self._seek_to(OffsetSpec.LATEST, partitions)

    async def _seek_to(self, spec: int, partitions: Iterable[TopicPartition] | None) -> None:
        state = self._state
        tps = [state.check_assigned(tp) for tp in (state.assigned if partitions is None else partitions)]
        if tps:
            for tp, offset in (await self.client.list_offsets(dict.fromkeys(tps, spec))).items():
                state.set_position(tp, offset)

    async def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` returns for ``tp`` (resolved first when it has none)."""
        tp = self._state.check_assigned(tp)
        if tp not in self._state.positions:
            await self._reset([tp])
        return self._state.position(tp)

    async def _reset(self, tps: list[TopicPartition], *, use_committed: bool = True) -> None:
        if use_committed and self.config.group_id is not None:
            committed = await self._fetch_committed(self.config.group_id, tps)
            for tp, om in committed.items():
                self._state.positions[tp] = om.offset
            tps = [tp for tp in tps if tp not in committed]
            if not tps:
                return
        spec = reset_spec(self.config.auto_offset_reset, tps)
        for tp, offset in (await self.client.list_offsets(dict.fromkeys(tps, spec))).items():
            self._state.positions[tp] = offset

    # polling ----------------------------------------------------------------------------------------
    async def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Up to ``max_records`` (``max.poll.records``) records from the assigned partitions, waiting up to
        ``timeout_ms`` for the first one. A subscribed consumer first keeps its group membership active (a
        rebalance completes inside ``poll``, awaiting the listener's callbacks)."""
        if self._closed:
            raise KafkaClientError("the consumer is closed", retriable=False)
        if not self._started:
            await self.start()
        deadline = time.monotonic() + timeout_ms / 1000.0
        while True:
            if self._coordinator is not None:
                await self._check_metadata()
                await self._coordinator.ensure_active(deadline)
            fetchable = self._state.fetchable()
            remaining = deadline - time.monotonic()
            if fetchable or self._coordinator is None or remaining <= 0:
                break
            await asyncio.sleep(min(remaining, _IDLE_STEP))  # a member without partitions keeps its membership
        if not fetchable:
            return []
        await self._maybe_auto_commit()
        limit = self.config.max_poll_records if max_records is None else max_records
        missing = self._state.missing_positions(fetchable)
        if missing:
            await self._reset(missing)
        out: list[ConsumerRecord] = []
        first = True
        while first or (not out and time.monotonic() < deadline):
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            wait_ms = 0 if first else min(self.config.fetch_max_wait_ms, max(remaining_ms, 1))
            first = False
            self._take_buffered(fetchable, out, limit)
            if len(out) >= limit:
                break
            await self._fetch([tp for tp in fetchable if not self._state.buffered.get(tp)], wait_ms)
            self._take_buffered(fetchable, out, limit)
            error, self._serialization_error = self._serialization_error, None
            if error is not None:  # as Java's fetcher: the records before the bad one first, then the error
                if not out:
                    raise error
                return out  # positions moved past these; the next poll fails at the bad record again
            coordinator = self._coordinator
            if coordinator is not None and not coordinator.member.stable:
                break  # a rebalance began: return what we have, the next poll rejoins
            fetchable = [tp for tp in self._state.fetchable() if tp in fetchable]
            if not fetchable:
                break
        return out

    def _take_buffered(self, fetchable: list[TopicPartition], out: list[ConsumerRecord], limit: int) -> None:
        """Move buffered records into ``out``, partitions in turn from ``self._next`` (rotating, so one busy
        partition does not starve the others)."""
        for i in range(len(fetchable)):
            self._state.take_buffered(fetchable[(self._next + i) % len(fetchable)], out, limit)
            if len(out) >= limit:
                break
        self._next = (self._next + 1) % max(len(fetchable), 1)

    async def _fetch(self, tps: list[TopicPartition], wait_ms: int) -> None:
        if not tps:
            return
        state = self._state
        positions = {tp: state.positions[tp] for tp in tps}
        fetched = await fetch_round(self.client, positions, config=self.config, max_wait_ms=wait_ms)
        if all(result.retry for result in fetched.values()):
            await asyncio.sleep(self.config.retry_backoff_ms / 1000.0)  # leaders moving: do not spin
        out_of_range = []
        for tp, result in fetched.items():
            if tp not in state.assigned or state.positions.get(tp) != positions[tp]:
                continue  # reassigned or sought meanwhile (a rebalance callback ran)
            if result.out_of_range:
                out_of_range.append(tp)
                continue
            if result.retry:
                continue
            queue = state.buffered.setdefault(tp, deque())
            try:
                for batch in result.batches:
                    queue.extend(records_of(batch, positions[tp], self._deserialize_key, self._deserialize_value))
            except SerializationError as e:  # the records before it stay buffered
                self._serialization_error = self._serialization_error or e
                continue
            state.fetched_to[tp] = result.next_position
        if out_of_range:
            await self._reset(out_of_range, use_committed=False)
