"""The share coordinator (KIP-932): serves the persisted state of share-partitions, kept in
``__share_group_state``, for the keys whose partition of that topic this broker leads.

Coordination is the other coordinators' (``InternalTopic``): ``__share_group_state`` is created on the first
FindCoordinator (key type 2) or persister call, with ``share.coordinator.state.topic.num.partitions``
partitions, replication factor ``share.coordinator.state.topic.replication.factor`` and ``min.insync.replicas``
``share.coordinator.state.topic.min.isr`` (both capped at the live brokers), ``cleanup.policy=delete`` with no
retention (as Kafka: a share-partition's state is its last snapshot plus the updates after it, which compaction
would lose). A key ``"group:topic_id:partition"`` lives in partition ``abs(hashCode(key)) % partitions``
(``records.share_state_partition_for``). A broker that starts leading a partition loads it (replays its
snapshots, updates and tombstones in log order into a ``ShareCoordinatorShard``; COORDINATOR_LOAD_IN_PROGRESS
meanwhile); losing the leadership drops its shard.

Operations (``initialize``, ``read``, ``write``, ``delete``, ``read_summary``; the checks and records are the
shard's): one at a time per share-partition (a lock per key); the records an operation writes are appended
as one batch with acks=all and replayed into the shard once the high watermark passed them, before the
answer; a failed append answers its error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT) and
leaves the state alone. So every acknowledged write is in the log of every in-sync replica, and the next
leader's load finds it. Not this broker's key: NOT_COORDINATOR (or COORDINATOR_LOAD_IN_PROGRESS /
COORDINATOR_NOT_AVAILABLE, as ``InternalTopic.coordinator_error``).

Pruning (Kafka's): every ``share.coordinator.state.topic.prune.interval.ms`` the records of a coordinated
partition before the oldest last snapshot of a key that has state (all of them when no key has state) are
deleted (the log start moves up, as DeleteRecords; followers follow).

Gaps: no snapshots of cold share-partitions (Kafka's ``share.coordinator.cold.partition.snapshot.interval.ms``),
so a share-partition never written again holds back pruning. Event-loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from broker.coordinator.internal_topic import InternalTopic
from broker.coordinator.offset_store import iter_log_batches
from broker.log.clock import SYSTEM_CLOCK, Clock
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch_builder import RecordBatchBuilder

from .coordinator_shard import READ_UNINITIALIZED, ShareCoordinatorShard, ShareKey, ShareState
from .record_codec import ShareStateRecordError, decode_record, encode_record
from .records import (
    SHARE_GROUP_STATE_TOPIC,
    InvalidCoordinatorKey,
    ShareStateRecord,
    coordinator_key,
    parse_coordinator_key,
    share_state_partition_for,
)
from .state_batches import PersistedState, StateBatch

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.metadata.cache import MetadataCache
    from broker.replication.partition import Partition
    from broker.replication.replica_manager import ReplicaManager

log = logging.getLogger("kafkalog.share.coordinator")

TICK_S = 1.0


class ShareCoordinator:
    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        metadata: MetadataCache,
        replica_manager: ReplicaManager,
        topic_admin: TopicAdmin,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.broker_id, self.config, self.metadata, self.clock = broker_id, config, metadata, clock
        self.num_partitions: int = config["share.coordinator.state.topic.num.partitions"]
        self.updates_per_snapshot: int = config["share.coordinator.snapshot.update.records.per.snapshot"]
        self.topic = InternalTopic(
            SHARE_GROUP_STATE_TOPIC,
            self.num_partitions,
            replication_factor=config["share.coordinator.state.topic.replication.factor"],
            segment_bytes=config["share.coordinator.state.topic.segment.bytes"],
            min_isr=config["share.coordinator.state.topic.min.isr"],
            # Kafka's __share_group_state configs: the state is a snapshot plus updates, never compacted
            topic_configs={"cleanup.policy": "delete", "retention.ms": "-1", "compression.type": "uncompressed"},
            config=config,
            metadata=metadata,
            replica_manager=replica_manager,
            topic_admin=topic_admin,
            load=self._load,
            unload=self._unload,
        )
        self.shards: dict[int, ShareCoordinatorShard] = {}
        """Per ``__share_group_state`` partition coordinated here, its share-partitions' states."""
        self._locks: dict[ShareKey, list] = {}  # key -> [asyncio.Lock, users]
        self._next_prune_ms = 0

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the pruning timer (``prune``, checked every ``TICK_S``); loads follow the leadership."""
        self.topic.start(self._on_tick, TICK_S, "share-coordinator")

    async def _on_tick(self) -> None:
        now = self.clock.milliseconds()
        if now >= self._next_prune_ms:
            self._next_prune_ms = now + self.config["share.coordinator.state.topic.prune.interval.ms"]
            self.prune()

    def prune(self) -> dict[int, int]:
        """Delete, in every partition coordinated here, the records before the oldest snapshot still needed
        (``ShareCoordinatorShard.redundant_offset``, at most the high watermark); {partition: new log start}
        of those that moved. Followers follow the leader's log start."""
        moved = {}
        for p, shard in list(self.shards.items()):
            part, _ = self.topic.replica_manager.leader_partition(SHARE_GROUP_STATE_TOPIC, p)
            if part is None or p not in self.topic.loaded:
                continue
            plog = part.log
            offset = min(shard.redundant_offset(plog.log_end_offset), part.high_watermark)
            if offset > plog.log_start_offset:
                moved[p] = plog.delete_records_before(offset)
                log.debug("%s-%d: records before %d deleted (redundant)", SHARE_GROUP_STATE_TOPIC, p, offset)
        return moved

    async def stop(self) -> None:
        """Refuse coordination from now on; cancel the loads under way. Idempotent."""
        await self.topic.stop()

    # -- coordination ---------------------------------------------------------------------------------------------
    def partition_of(self, group_id: str, topic_id: uuid.UUID, partition: int) -> int:
        return share_state_partition_for(coordinator_key(group_id, topic_id, partition), self.num_partitions)

    async def find_coordinator(self, key: str) -> tuple[ErrorCode, int]:
        """(error, node id) of the coordinator of ``"group:topic_id:partition"``; creates ``__share_group_state``
        when missing. INVALID_REQUEST for a malformed key; COORDINATOR_NOT_AVAILABLE while the key's partition
        has no live leader or is still loading here."""
        try:
            parse_coordinator_key(key)
        except InvalidCoordinatorKey:
            return ErrorCode.INVALID_REQUEST, -1
        p = share_state_partition_for(key, self.num_partitions)
        code, leader = await self.topic.find_leader(p)
        if code == ErrorCode.NONE and leader == self.broker_id and p not in self.topic.loaded:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1
        return code, leader

    def coordinates(self, group_id: str, topic_id: uuid.UUID, partition: int) -> bool:
        """Whether this broker coordinates the share-partition's state now (its partition is loaded here)."""
        return self.topic.coordinator_error(self.partition_of(group_id, topic_id, partition)) == ErrorCode.NONE

    def _shard(self, k: ShareKey) -> tuple[int, ShareCoordinatorShard | None, ErrorCode]:
        p = self.partition_of(*k)
        code = self.topic.coordinator_error(p)
        shard = self.shards.get(p) if code == ErrorCode.NONE else None
        if code == ErrorCode.NONE and shard is None:
            code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        return p, shard, code

    def _topic_exists(self, topic_id: uuid.UUID, partition: int) -> bool:
        name = self.metadata.topic_by_id(topic_id)
        topic = self.metadata.topics.get(name) if name is not None else None
        return topic is not None and partition in topic.replicas

    def _not_here(self, code: ErrorCode, p: int) -> str:
        return f"broker {self.broker_id} does not coordinate {SHARE_GROUP_STATE_TOPIC}-{p} now ({code.name})"

    @contextlib.asynccontextmanager
    async def _locked(self, k: ShareKey) -> AsyncIterator[None]:
        entry = self._locks.get(k)
        if entry is None:
            entry = self._locks[k] = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            async with entry[0]:
                yield
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                self._locks.pop(k, None)

    async def _append(self, p: int, records: list[ShareStateRecord]) -> ErrorCode:
        """Append ``records`` as one batch, acks=all; replayed into partition ``p``'s shard once acknowledged."""
        if not records:
            return ErrorCode.NONE
        now = self.clock.milliseconds()
        b = RecordBatchBuilder()
        for r in records:
            key, value = encode_record(r)
            b.append(now, key, value)
        part, _ = self.topic.replica_manager.leader_partition(SHARE_GROUP_STATE_TOPIC, p)
        # the batch's base offset: InternalTopic.append appends before its first await
        base = part.log.log_end_offset if part is not None else None

        def commit() -> None:
            shard = self.shards.get(p)
            if shard is not None:
                for i, r in enumerate(records):
                    shard.replay(r, None if base is None else base + i)

        return await self.topic.append(p, bytearray(b.build()), commit, what="share state")

    # -- operations -----------------------------------------------------------------------------------------------
    async def initialize(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> tuple[ErrorCode, str | None]:
        k = (group_id, topic_id, partition)
        async with self._locked(k):
            p, shard, code = self._shard(k)
            if shard is None:
                return code, self._not_here(code, p)
            code, message, records = shard.initialize(k, state_epoch, start_offset, self.clock.milliseconds())
            if code == ErrorCode.NONE:
                code = await self._append(p, records)
                message = None if code == ErrorCode.NONE else f"writing the state failed: {code.name}"
            return code, message

    async def write(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        state_batches: Sequence[StateBatch],
        delivery_complete_count: int = -1,
    ) -> tuple[ErrorCode, str | None]:
        k = (group_id, topic_id, partition)
        async with self._locked(k):
            p, shard, code = self._shard(k)
            if shard is None:
                return code, self._not_here(code, p)
            code, message, records = shard.write(
                k,
                state_epoch,
                leader_epoch,
                start_offset,
                state_batches,
                self.clock.milliseconds(),
                delivery_complete_count,
            )
            if code == ErrorCode.NONE:
                code = await self._append(p, records)
                message = None if code == ErrorCode.NONE else f"writing the state failed: {code.name}"
            return code, message

    async def read(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        k = (group_id, topic_id, partition)
        async with self._locked(k):
            p, shard, code = self._shard(k)
            if shard is None:
                return code, self._not_here(code, p), None
            code, message, records = shard.read(k, leader_epoch)
            if code == ErrorCode.NONE:
                code = await self._append(p, records)
                if code != ErrorCode.NONE:
                    return code, f"recording the leader epoch failed: {code.name}", None
                state = shard.states.get(k)
                if state is None:  # deleted meanwhile (cannot happen under the key's lock)
                    return ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED, None
                return ErrorCode.NONE, None, state.persisted()
            return code, message, None

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, PersistedState | None]:
        code, message, state = await self.read_summary_state(group_id, topic_id, partition, leader_epoch)
        return code, message, None if state is None else state.persisted()

    async def read_summary_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> tuple[ErrorCode, str | None, ShareState | None]:
        """``read_summary`` with the whole stored state (its delivery complete count too)."""
        k = (group_id, topic_id, partition)
        p, shard, code = self._shard(k)
        if shard is None:
            return code, self._not_here(code, p), None
        return shard.read_summary(k, leader_epoch)

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> tuple[ErrorCode, str | None]:
        k = (group_id, topic_id, partition)
        async with self._locked(k):
            p, shard, code = self._shard(k)
            if shard is None:
                return code, self._not_here(code, p)
            code, message, records = shard.delete(k)
            if code == ErrorCode.NONE:
                code = await self._append(p, records)
                message = None if code == ErrorCode.NONE else f"writing the tombstones failed: {code.name}"
            return code, message

    # -- loading --------------------------------------------------------------------------------------------------
    async def _load(self, p: int, part: Partition) -> int:
        """Rebuild partition ``p``'s shard from its log; the number of records read."""
        shard = ShareCoordinatorShard(self.updates_per_snapshot, self._topic_exists)
        count = 0
        start = part.log.log_start_offset
        for batch in iter_log_batches(part.log):
            if batch.is_control:
                continue
            for rec in batch.records():
                if rec.offset < start or rec.key is None:  # the first batch may begin below the log start
                    continue
                count += 1
                try:
                    shard.replay(decode_record(rec.key, rec.value), rec.offset)
                except ShareStateRecordError as e:
                    log.warning("skipping a %s-%d record: %s", SHARE_GROUP_STATE_TOPIC, p, e)
            if count % 1000 < 100:
                await asyncio.sleep(0)
        self.shards[p] = shard
        return count

    def _unload(self, p: int) -> None:
        self.shards.pop(p, None)

    def share_partition_count(self) -> int:
        """How many share-partitions have state here (for metrics and tests)."""
        return sum(len(s.states) for s in self.shards.values())
