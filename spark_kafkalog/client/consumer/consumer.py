"""``Consumer``: Kafka's consumer, by manual assignment or as a member of a consumer group.

``assign`` a list of partitions, or ``subscribe`` to topics (or a pattern) with a ``group.id`` and let
the group's coordinator share the partitions among the members (``partition.assignment.strategy``:
range, roundrobin, sticky, cooperative-sticky; ``ConsumerCoordinator`` drives the group protocol and
heartbeats from a thread of its own). ``poll`` first keeps the membership active (joining or rejoining
when the group rebalances; this may take until the rebalance completes), then returns up to
``max_records`` decoded records (``max.poll.records`` by default), fetching from each assigned, not
paused partition in turn from its position.

A partition without a position starts at the group's committed offset (with a ``group.id``), else per
``auto.offset.reset``: ``latest`` (the default, as in Java), ``earliest``, or ``none`` (raise). An offset
that fell out of the log (retention) is reset the same way.

Committed offsets: ``commit`` stores positions (or given offsets; ``asynchronous=True`` returns at once
and reports to a callback from a later ``poll``), ``committed`` reads them back. A group member commits
with its generation (a commit after the group moved on raises ``CommitFailedError``); with ``assign``
the commit is made outside the group protocol (generation -1), which Kafka accepts while the group has
no active members. ``enable.auto.commit`` (the default) commits positions every ``auto.commit.interval.ms``
from ``poll``, before partitions are revoked, and on ``close``. ``offsets.storage`` (``kafka``, the
default, or ``zookeeper``: OffsetCommit/OffsetFetch v0, which the broker keeps in ZooKeeper as Kafka 0.8.2
did) with ``dual.commit.enabled`` (commit to both; read both and take the larger) gives the seeds'
migration path between the two.

Group protocols (``group.protocol``): ``classic`` (the default) is the JoinGroup/SyncGroup protocol above;
``consumer`` is KIP-848 (``MembershipManager``): the coordinator assigns (``group.remote.assignor``: uniform or
range, else its default), the member heartbeats with ConsumerGroupHeartbeat and commits with its member epoch
(OffsetCommit/OffsetFetch v9); a ``pattern`` (and ``^`` entries of ``topics``) is sent as
``subscribed_topic_regex`` and matched against whole topic names by the coordinator (RE2/J syntax). A broker
without the consumer protocol fails ``poll`` with ``UnsupportedGroupProtocolError`` naming ``group_protocol="classic"``.

Rebalance listeners: an object with any of ``on_partitions_revoked(partitions)``,
``on_partitions_assigned(partitions)`` and ``on_partitions_lost(partitions)`` (revoked when absent), called
from ``poll`` (and ``close``) on the polling thread, as Java's ``ConsumerRebalanceListener``. With the
cooperative protocol they receive only the partitions that changed.

Not thread-safe: one thread polls, as with Java's consumer.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from spark_kafkalog.client.admin.group_admin import GroupAdmin, OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.assignment_state import AssignmentState
from spark_kafkalog.client.consumer.consumer_coordinator import ConsumerCoordinator
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
from spark_kafkalog.client.consumer.consumer_views import ConsumerGroupMetadata, ConsumerViews
from spark_kafkalog.client.consumer.group_membership import CommitFailedError, RebalanceEvent
from spark_kafkalog.client.consumer.membership_manager import MembershipManager
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.errors import KafkaClientError, OffsetOutOfRangeError
from spark_kafkalog.client.serialization import SerializationError
from spark_kafkalog.client.types import ConsumerRecord, OffsetSpec, TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = ["CommitFailedError", "Consumer", "ConsumerGroupMetadata"]

log = logging.getLogger("kafkalog.consumer")

CommitCallback = Callable[[Mapping[TopicPartition, OffsetAndMetadata], BaseException | None], None]


class Consumer(ConsumerViews):
    """``Consumer("host:9092", auto_offset_reset="earliest")``; a context manager."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        self.client = KafkaClient(bootstrap_servers, config, **kwargs)
        cfg = self.client.config
        self.config = cfg
        self._deserialize_key, self._deserialize_value = deserializers(cfg)
        self._state = AssignmentState()  # assignment, positions, paused partitions, fetch buffers
        self._next = 0
        self._groups = GroupAdmin(self.client)
        self._last_auto_commit = time.monotonic()
        # subscription (group membership)
        self._coordinator: ConsumerCoordinator | MembershipManager | None = None
        self._topics: tuple[str, ...] = ()
        self._patterns: list[Callable[[str], Any]] = []
        self._regex: str | None = None  # group.protocol=consumer: the patterns, resolved by the coordinator
        self._listener: Any = None
        self._next_metadata_check = 0.0
        self._partition_counts: dict[str, int] = {}
        # asynchronous commits: completed (callback, offsets, error), reported from the polling thread
        self._commit_results: deque[tuple[CommitCallback | None, dict, BaseException | None]] = deque()
        self._async_commits: list[threading.Thread] = []
        self._closed = False

    def close(self) -> None:
        """Commit (with auto commit), leave the group (revocation callbacks run here) and close the connections."""
        if self._closed:
            return
        self._closed = True
        try:
            for t in self._async_commits:
                t.join()
            self._report_async_commits()
            if self._coordinator is not None:
                self._coordinator.leave()  # the revocation commits positions with auto commit
            elif self._auto_commits:
                self.commit()
        finally:
            if self._coordinator is not None:
                self._coordinator.close()
            self.client.close()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # committed offsets (group.id) ----------------------------------------------------------------
    def commit(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        *,
        asynchronous: bool = False,
        callback: CommitCallback | None = None,
    ) -> None:
        """Commit ``offsets`` (by default the position of every assigned partition that has one) for the group.

        A group member commits with its generation: ``CommitFailedError`` when the group rebalanced meanwhile
        (the partitions may be someone else's now; the next ``poll`` rejoins). ``asynchronous=True`` returns
        at once; ``callback(offsets, error or None)`` then runs from a later ``poll``, ``commit`` or ``close``.
        """
        group = self._group()
        if offsets is None:
            offsets = self._state.committable()
        wanted = offsets_to_commit(offsets)
        self._last_auto_commit = time.monotonic()
        if not asynchronous:
            self._report_async_commits()
            self._commit_now(group, wanted)
            if callback is not None:
                callback(wanted, None)
            return

        def run() -> None:
            try:
                self._commit_now(group, wanted)
                self._commit_results.append((callback, wanted, None))
            except Exception as e:  # reported to the callback on the polling thread
                self._commit_results.append((callback, wanted, e))

        thread = threading.Thread(target=run, name="kafkalog-commit", daemon=True)
        self._async_commits = [t for t in self._async_commits if t.is_alive()] + [thread]
        thread.start()

    def commit_async(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        callback: CommitCallback | None = None,
    ) -> None:
        """``commit(offsets, asynchronous=True, callback=callback)`` (kafka-python's and Java's name)."""
        self.commit(offsets, asynchronous=True, callback=callback)

    def _commit_now(self, group: str, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        if not offsets:
            return
        storage, dual = self.config.offsets_storage, self.config.dual_commit_enabled
        if storage == "zookeeper" or dual:  # OffsetCommit v0: the broker writes /consumers/<group>/offsets
            self._groups.commit_offsets(group, offsets, storage="zookeeper")
        if storage == "zookeeper" and not dual:
            return
        if self._coordinator is None:
            self._groups.commit_offsets(group, offsets)
            return
        if isinstance(self._coordinator, MembershipManager):
            self._coordinator.commit_offsets(self._groups, offsets)
            return
        generation, member_id, instance_id = self._coordinator.member.commit_identity()
        if generation < 0:
            raise not_a_member(group)
        try:
            self._groups.commit_offsets(
                group, offsets, generation=generation, member_id=member_id, group_instance_id=instance_id
            )
        except KafkaClientError as e:
            if e.error_code not in COMMIT_FAILED_CODES:
                raise
            self._coordinator.member.on_commit_error(e.error_code)
            raise commit_failed(group, e.error_code) from e

    def _report_async_commits(self) -> None:
        while self._commit_results:
            callback, offsets, error = self._commit_results.popleft()
            if callback is not None:
                callback(offsets, error)
            elif error is not None:
                log.warning("asynchronous commit of %d offsets failed: %s", len(offsets), error)

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offset of each partition (None where nothing was committed)."""
        tps = [TopicPartition(*tp) for tp in partitions]
        found = self._fetch_committed(self._group(), tps)
        return {tp: found.get(tp) for tp in tps}

    def _fetch_committed(self, group: str, tps: list[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """From ``offsets.storage``; with ``dual.commit.enabled`` (migrating either way) from both stores, the
        larger offset winning, so a step of the migration never reads a record twice."""
        found: dict[TopicPartition, OffsetAndMetadata] = {}
        for storage in offset_stores(self.config):
            if storage == "kafka" and isinstance(self._coordinator, MembershipManager):
                stored = self._coordinator.fetch_committed(self._groups, tps)  # OffsetFetch v9 as the member
            else:
                stored = self._groups.list_group_offsets(group, tps, storage=storage)
            merge_committed(found, stored)
        return found

    def _maybe_auto_commit(self) -> None:
        if (
            self._auto_commits
            and time.monotonic() - self._last_auto_commit >= self.config.auto_commit_interval_ms / 1000
        ):
            self._auto_commit(self._state.assigned)

    def _auto_commit(self, partitions: list[TopicPartition]) -> None:
        offsets = self._state.committable(partitions)
        try:
            self.commit(offsets)
        except KafkaClientError as e:  # as Java: an auto commit that fails is logged, the next one may succeed
            log.warning("group %s: auto commit of %d offsets failed: %s", self.config.group_id, len(offsets), e)

    # subscription ------------------------------------------------------------------------------
    def subscribe(
        self,
        topics: str | Iterable[str] = (),
        pattern: str | re.Pattern[str] | None = None,
        listener: Any = None,
    ) -> None:
        """Join the consumer group ``group.id`` for ``topics`` and/or the topics matching ``pattern`` (a regular
        expression matching the whole name, as Java; entries of ``topics`` starting with ``^`` are regular
        expressions searched in the name, as librdkafka). Replaces the previous subscription; the assignment
        follows at the next ``poll``."""
        check_can_subscribe(self.config.group_id, self._coordinator is not None, bool(self._state.assigned))
        self._topics, self._patterns, self._regex = parse_subscription(topics, pattern)
        if not self._topics and not self._patterns:
            self.unsubscribe()
            return
        self._listener = listener
        if self._coordinator is None and self.config.group_protocol == "consumer":
            self._coordinator = MembershipManager(self.config, self.client, self._on_rebalance)
        elif self._coordinator is None:
            self._coordinator = ConsumerCoordinator(self.config, self._partition_counts_of, self._on_rebalance)
        self._next_metadata_check = 0.0
        self._check_metadata()

    def unsubscribe(self) -> None:
        """Leave the group (revocation callbacks run) and drop the assignment."""
        coordinator, self._coordinator = self._coordinator, None
        if coordinator is not None:
            try:
                coordinator.leave("the consumer unsubscribed")
            finally:
                coordinator.close()
        self._topics, self._patterns, self._regex = (), [], None
        self._state.assign([])

    def _check_metadata(self) -> None:
        """Every ``metadata.max.age.ms``: resolve patterns, and rejoin when a subscribed topic's partition count
        changed (the leader then assigns the new partitions), as Java's consumer does."""
        now = time.monotonic()
        if isinstance(self._coordinator, MembershipManager):  # the coordinator resolves regexes and partitions
            self._coordinator.member.subscribe(self._topics, self._regex)
            return
        if self._coordinator is None or now < self._next_metadata_check:
            return
        self._next_metadata_check = now + self.config.metadata_max_age_ms / 1000
        topics = set(self._topics)
        if self._patterns:
            for name in self.client.topics():
                if any(match(name) for match in self._patterns):
                    topics.add(name)
        member = self._coordinator.member
        member.subscribe(topics)
        counts = self._partition_counts_of(tuple(sorted(topics)))
        if self._partition_counts and counts != self._partition_counts and member.stable:
            member.request_rejoin()
        self._partition_counts = counts

    def _partition_counts_of(self, topics: tuple[str, ...]) -> dict[str, int]:
        counts = {}
        for topic in topics:
            try:
                counts[topic] = len(self.client.topic_info(topic, refresh=True).partitions)
            except KafkaClientError as e:  # not created yet: assigned once it exists
                if e.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                    raise  # as Java's consumer: no Describe on a subscribed topic fails poll (issue 27)
                log.debug("topic %s has no partitions to assign: %s", topic, e)
        return counts

    def _on_rebalance(self, events: list[RebalanceEvent]) -> None:
        """Run rebalance callbacks; partitions leave the assignment only after their callback ran (so the
        listener may still commit their positions)."""
        assert self._coordinator is not None
        for event in events:
            partitions = list(event.partitions)
            if event.kind == "revoked" and self.config.enable_auto_commit and self.config.group_id is not None:
                self._auto_commit(partitions)
            if event.kind == "assigned":
                self._state.assign(list(self._coordinator.member.owned))
                self._call_listener(event)
            else:
                self._call_listener(event)
                self._state.remove(partitions)

    def _call_listener(self, event: RebalanceEvent) -> None:
        method = listener_method(self._listener, event)
        if method is None:
            return
        try:
            method(list(event.partitions))
        except Exception:  # as Java: a failing callback is logged; the rebalance goes on
            log.exception("rebalance listener %s failed", method.__name__)

    # assignment and positions ------------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Replace the assignment; positions of partitions kept in it are kept."""
        if self._coordinator is not None:
            raise KafkaClientError(
                "assign() and subscribe() are mutually exclusive; unsubscribe() first", retriable=False
            )
        tps = list(dict.fromkeys(TopicPartition(*tp) for tp in partitions))
        for tp in tps:
            self.client.leader_for(tp)  # fails early for a partition that does not exist
        self._state.assign(tps)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(OffsetSpec.EARLIEST, partitions)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(OffsetSpec.LATEST, partitions)

    def _seek_to(self, spec: int, partitions: Iterable[TopicPartition] | None) -> None:
        state = self._state
        tps = [state.check_assigned(tp) for tp in (state.assigned if partitions is None else partitions)]
        if not tps:
            return
        for tp, offset in self.client.list_offsets({tp: spec for tp in tps}).items():
            state.set_position(tp, offset)

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` returns for ``tp``."""
        tp = self._state.check_assigned(tp)
        if tp not in self._state.positions:
            self._reset([tp])
        return self._state.position(tp)

    def _reset(self, tps: list[TopicPartition], *, use_committed: bool = True) -> None:
        if use_committed and self.config.group_id is not None:
            committed = self._fetch_committed(self.config.group_id, tps)
            for tp, om in committed.items():
                self._state.positions[tp] = om.offset
            tps = [tp for tp in tps if tp not in committed]
            if not tps:
                return
        spec = reset_spec(self.config.auto_offset_reset, tps)
        for tp, offset in self.client.list_offsets({tp: spec for tp in tps}).items():
            self._state.positions[tp] = offset

    # polling -----------------------------------------------------------------------------------
    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Up to ``max_records`` records from the assigned partitions, waiting up to ``timeout_ms`` for the
        first one. A subscribed consumer first keeps its group membership active (a rebalance completes
        inside ``poll``, running the listener's callbacks)."""
        if self._closed:
            raise KafkaClientError("the consumer is closed", retriable=False)
        deadline = time.monotonic() + timeout_ms / 1000.0
        self._report_async_commits()
        while True:
            if self._coordinator is not None:
                self._check_metadata()
                self._coordinator.ensure_active(deadline)
            fetchable = self._state.fetchable()
            remaining = deadline - time.monotonic()
            if fetchable or self._coordinator is None or remaining <= 0:
                break
            time.sleep(min(remaining, 0.1))  # a member without partitions (or all paused) keeps its membership
        if not fetchable:
            return []
        self._maybe_auto_commit()
        limit = self.config.max_poll_records if max_records is None else max_records
        missing = self._state.missing_positions(fetchable)
        if missing:
            self._reset(missing)
        out: list[ConsumerRecord] = []
        first = True
        while first or (not out and time.monotonic() < deadline):
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            wait_ms = 0 if first else min(self.config.fetch_max_wait_ms, max(remaining_ms // len(fetchable), 1))
            first = False
            for i in range(len(fetchable)):
                tp = fetchable[(self._next + i) % len(fetchable)]
                self._state.take_buffered(tp, out, limit)
                if len(out) >= limit:
                    break
                try:
                    self._fetch_into(tp, out, limit, wait_ms)
                except SerializationError:  # as Java's fetcher: the records before the bad one first, then the error
                    self._state.take_buffered(tp, out, limit)
                    if not out:
                        raise
                    return out  # positions moved past these; the next poll fails at the bad record again
                if len(out) >= limit:
                    break
            self._next = (self._next + 1) % len(fetchable)
            if self._coordinator is not None and not self._coordinator.member.stable:
                break  # a rebalance began: return what we have, the next poll rejoins
        return out

    def _fetch_into(self, tp: TopicPartition, out: list[ConsumerRecord], limit: int, wait_ms: int) -> None:
        state = self._state
        if state.buffered.get(tp):
            return
        position = state.positions[tp]
        try:
            batches = self.client.fetch_batches(tp, position, None, max_wait_ms=wait_ms)
            queue = state.buffered.setdefault(tp, deque())
            while True:
                try:
                    fetched = next(batches)
                except StopIteration as walked:  # the whole fetch was walked: its end is the next position
                    state.fetched_to[tp] = walked.value
                    break
                queue.extend(records_of(fetched, position, self._deserialize_key, self._deserialize_value))
                if len(out) + len(queue) >= limit:
                    break
            batches.close()
        except OffsetOutOfRangeError:
            state.buffered.pop(tp, None)
            state.fetched_to.pop(tp, None)
            self._reset([tp], use_committed=False)
            return
        self._state.take_buffered(tp, out, limit)
