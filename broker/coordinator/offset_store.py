"""Committed offsets and group metadata of the groups this broker coordinates: the in-memory cache of
``__consumer_offsets`` partitions, the record batches written to them, and loading a partition's log.

The log is the truth, the cache is rebuilt from it: ``load_partition`` reads a partition from its log start
to its log end and applies every record in log order (the last value of a key wins; a null value, a
tombstone, deletes the offset or the group record), so an older log entry can never override a newer one.
It runs when this broker becomes the partition's leader: every acknowledged write is in its log (it was in
the ISR), and what lies above its high watermark is what the followers will converge to, so the whole log
counts (Kafka's coordinator loads to the log end too). A commit reaches the cache only after its batch was
acknowledged (the coordinator applies ``record_offsets`` then, in log order).

Record batches are built with ``RecordBatchBuilder`` (uncompressed v2, CreateTime = now); keys and values
are Kafka's (``offsets_topic``; the KIP-848 consumer group records, types 3-8 and 16, ``consumer.record_codec``,
and the KIP-932 share group records, types 10-15, ``share.record_codec``: kept by key while loading, for the
coordinator to replay). Event-loop only; ``load_partition`` yields to the loop between reads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spark_kafkalog.records.batch_builder import RecordBatchBuilder
from spark_kafkalog.records.splitter import iter_batches

from .consumer.record_codec import decode_record, encode_record, is_consumer_group_key
from .consumer.records import ConsumerGroupRecordKey, CoordinatorRecord
from .offsets_topic import (
    GroupKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetKey,
    OffsetsRecordError,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
    partition_for,
)
from .share import record_codec as share_codec
from .share.records import ShareGroupRecord, ShareGroupRecordKey

if TYPE_CHECKING:
    from broker.log import PartitionLog

    from .group import Group

log = logging.getLogger("kafkalog.coordinator")

LOAD_READ_BYTES = 1 << 20


@dataclass
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1
    """Set only by OffsetCommit v2-4 with an explicit retention time (Kafka's v1 value)."""


class OffsetStore:
    """``offsets[group][(topic, partition)]`` and ``groups[group]`` (the last GroupMetadataValue written)."""

    def __init__(self, num_partitions: int) -> None:
        self.num_partitions = num_partitions
        self.offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        self.groups: dict[str, object] = {}
        self.pending_txn: dict[int, list[tuple[int, str, dict[tuple[str, int], CommittedOffset]]]] = {}
        """Offsets committed in transactions not yet ended, by producer id: ``(log offset of their batch, group,
        offsets)`` in log order (TxnOffsetCommit). A marker ends only the entries below its own offset: a
        producer's next transaction may append offsets before the previous one's marker has been applied."""
        self.consumer_records: dict[str, dict[ConsumerGroupRecordKey, CoordinatorRecord]] = {}
        """KIP-848 consumer group records (types 3-8, 16) read by ``load_partition``, by group: the last record of
        every key (tombstones included) in the order of those last writes, i.e. the log as compaction leaves it.
        The coordinator replays them into its consumer groups and then takes them (``take_consumer_records``)."""
        self.share_records: dict[str, dict[ShareGroupRecordKey, ShareGroupRecord]] = {}
        """KIP-932 share group records (types 10-15) read by ``load_partition``, by group, as ``consumer_records``
        (``take_share_records``)."""

    # -- transactional offsets ------------------------------------------------------------------
    def add_pending(
        self, producer_id: int, group: str, offsets: dict[tuple[str, int], CommittedOffset], log_offset: int
    ) -> None:
        self.pending_txn.setdefault(producer_id, []).append((log_offset, group, dict(offsets)))

    def end_txn(self, producer_id: int, partition: int, commit: bool, marker_offset: int) -> None:
        """A COMMIT (the pending offsets become committed, in log order) or ABORT marker of ``producer_id`` at
        ``marker_offset`` on ``__consumer_offsets`` partition ``partition``."""
        entries = self.pending_txn.get(producer_id)
        if not entries:
            return
        kept = []
        for entry in entries:
            log_offset, group, offsets = entry
            if log_offset < marker_offset and self.partition_of(group) == partition:
                if commit:
                    self.record_offsets(group, offsets)
            else:
                kept.append(entry)
        if kept:
            self.pending_txn[producer_id] = kept
        else:
            del self.pending_txn[producer_id]

    def pending_producers(self, partition: int) -> set[int]:
        return {
            pid
            for pid, entries in self.pending_txn.items()
            if any(self.partition_of(group) == partition for _, group, _ in entries)
        }

    def unstable(self, group: str) -> set[tuple[str, int]]:
        """Partitions of ``group`` with a transactional offset not yet committed or aborted."""
        out: set[tuple[str, int]] = set()
        for entries in self.pending_txn.values():
            for _, g, offsets in entries:
                if g == group:
                    out.update(offsets)
        return out

    def partition_of(self, group: str) -> int:
        return partition_for(group, self.num_partitions)

    def groups_of_partition(self, partition: int) -> set[str]:
        known = set(self.offsets) | set(self.groups) | {g for es in self.pending_txn.values() for _, g, _ in es}
        known |= set(self.consumer_records) | set(self.share_records)
        return {g for g in known if self.partition_of(g) == partition}

    # -- cache updates ------------------------------------------------------------------------
    def record_offsets(self, group: str, offsets: dict[tuple[str, int], CommittedOffset]) -> None:
        if offsets:
            self.offsets.setdefault(group, {}).update(offsets)

    def delete_offsets(self, group: str, tps: Iterable[tuple[str, int]]) -> None:
        cached = self.offsets.get(group)
        if cached is None:
            return
        for tp in tps:
            cached.pop(tp, None)
        if not cached:
            del self.offsets[group]

    def drop_group(self, group: str) -> None:
        self.offsets.pop(group, None)
        self.groups.pop(group, None)
        self.consumer_records.pop(group, None)
        self.share_records.pop(group, None)
        for pid in list(self.pending_txn):
            self.pending_txn[pid] = [e for e in self.pending_txn[pid] if e[1] != group]
            if not self.pending_txn[pid]:
                del self.pending_txn[pid]

    def drop_partition(self, partition: int) -> set[str]:
        """Forget the groups of a partition this broker no longer leads; returns them."""
        gone = self.groups_of_partition(partition)
        for g in gone:
            self.drop_group(g)
        return gone

    def apply_record(self, key: bytes | None, value: bytes | None) -> None:
        """Apply one record of the log (load path). Unknown or malformed records are skipped with a warning."""
        try:
            if is_consumer_group_key(key):
                assert key is not None, "is_consumer_group_key read its type"
                rec = decode_record(key, value)
                records = self.consumer_records.setdefault(rec.group_id, {})
                records.pop(rec.key, None)  # re-inserted last: the order of last writes
                records[rec.key] = rec
                return
            if share_codec.is_share_group_key(key):
                assert key is not None, "is_share_group_key read its type"
                srec = share_codec.decode_record(key, value)
                shared = self.share_records.setdefault(srec.group_id, {})
                shared.pop(srec.key, None)  # re-inserted last: the order of last writes
                shared[srec.key] = srec
                return
            k = decode_key(key)
            if isinstance(k, OffsetKey):
                if value is None:
                    self.delete_offsets(k.group, [(k.topic, k.partition)])
                else:
                    v = decode_offset_value(value)
                    self.offsets.setdefault(k.group, {})[(k.topic, k.partition)] = CommittedOffset(
                        v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp
                    )
            elif isinstance(k, GroupKey):
                if value is None:
                    self.groups.pop(k.group, None)
                else:
                    self.groups[k.group] = decode_group_value(value)
        except OffsetsRecordError as e:
            log.warning("skipping a __consumer_offsets record: %s", e)

    def take_consumer_records(self, partition: int) -> dict[str, list[CoordinatorRecord]]:
        """The consumer group records loaded for ``partition``'s groups, by group, in replay order; forgotten here."""
        out = {}
        for group in [g for g in self.consumer_records if self.partition_of(g) == partition]:
            out[group] = list(self.consumer_records.pop(group).values())
        return out

    def take_share_records(self, partition: int) -> dict[str, list[ShareGroupRecord]]:
        """The share group records loaded for ``partition``'s groups, by group, in replay order; forgotten here."""
        out = {}
        for group in [g for g in self.share_records if self.partition_of(g) == partition]:
            out[group] = list(self.share_records.pop(group).values())
        return out

    async def load_partition(self, plog: PartitionLog, partition: int) -> int:
        """Rebuild the cache of ``partition`` from its whole log; returns the number of records applied."""
        self.drop_partition(partition)
        count = 0
        for batch in iter_log_batches(plog):
            header = batch.header() if batch.magic == 2 else None
            if batch.is_control:
                assert header is not None, "only a v2 batch is a control batch"
                marker = end_txn_marker(batch)
                if marker is not None:
                    self.end_txn(header.producer_id, partition, marker, header.base_offset)
                continue
            for rec in batch.records():
                if header is not None and header.is_transactional and header.producer_id >= 0:
                    self.apply_txn_record(header.producer_id, rec.key, rec.value, header.base_offset)
                else:
                    self.apply_record(rec.key, rec.value)
                count += 1
                if count % 1000 == 0:
                    await asyncio.sleep(0)
        return count

    def apply_txn_record(self, producer_id: int, key: bytes | None, value: bytes | None, log_offset: int) -> None:
        """A transactional offset commit of the log (load path): pending until its producer's marker."""
        try:
            k = decode_key(key)
            if isinstance(k, OffsetKey) and value is not None:
                v = decode_offset_value(value)
                c = CommittedOffset(v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp)
                self.add_pending(producer_id, k.group, {(k.topic, k.partition): c}, log_offset)
        except OffsetsRecordError as e:
            log.warning("skipping a transactional __consumer_offsets record: %s", e)


def end_txn_marker(batch) -> bool | None:
    """True for a COMMIT marker batch, False for ABORT, None for any other control batch. Control record
    key: version int16, type int16 (0 ABORT, 1 COMMIT)."""
    for rec in batch.records():
        key = rec.key
        if key is not None and len(key) >= 4:
            kind = int.from_bytes(bytes(key[2:4]), "big", signed=True)
            if kind in (0, 1):
                return kind == 1
    return None


def iter_log_batches(plog: PartitionLog, start: int | None = None, end: int | None = None) -> Iterator:
    """Every batch (``BatchView``) from ``start`` (the log start) below ``end`` (the log end), in order."""
    offset = plog.log_start_offset if start is None else max(start, plog.log_start_offset)
    end = plog.log_end_offset if end is None else end
    while offset < end:
        data = plog.read(offset, LOAD_READ_BYTES, max_offset=end)
        if data.records is None:
            break
        with data.records as region:
            buf = region.read_bytes()
        advanced = False
        for batch in iter_batches(buf):
            if batch.next_offset <= offset:
                continue
            yield batch
            offset = batch.next_offset
            advanced = True
        if not advanced:
            break


def iter_log_records(plog: PartitionLog) -> Iterator[tuple[bytes | None, bytes | None]]:
    """(key, value) of every data record from the log start up to the log end, in offset order."""
    start = plog.log_start_offset
    for batch in iter_log_batches(plog):
        if not batch.is_control:
            for rec in batch.records():
                if rec.offset >= start:  # the first batch may begin below the log start
                    yield rec.key, rec.value


# -- record batches -------------------------------------------------------------------------------
def offset_commit_batch(
    group: str,
    offsets: dict[tuple[str, int], CommittedOffset],
    now_ms: int,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
) -> bytearray:
    """The commit's records; with ``producer_id`` >= 0 a transactional batch of that producer (TxnOffsetCommit,
    no sequence numbers, as Kafka writes it)."""
    b = RecordBatchBuilder(producer_id=producer_id, producer_epoch=producer_epoch, is_transactional=producer_id >= 0)
    for (topic, partition), c in offsets.items():
        value = encode_offset_value(
            c.offset, c.metadata, c.commit_timestamp, leader_epoch=c.leader_epoch, expire_timestamp=c.expire_timestamp
        )
        b.append(now_ms, encode_offset_key(group, topic, partition), value)
    return bytearray(b.build())


def group_metadata_value(group: Group, now_ms: int) -> Any:
    """A classic group as its ``GroupMetadataValue`` (Kafka's ``storeGroup``; a declared struct, hence ``Any``):
    every member with its subscription for the group's protocol and its assignment; the state timestamp is
    ``now_ms`` when the group has none. Written by a completed rebalance and by a consumer group's downgrade."""
    return GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation,
        protocol=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp=group.state_timestamp_ms if group.state_timestamp_ms >= 0 else now_ms,
        members=[
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.metadata_for(group.protocol_name),
                assignment=m.assignment,
            )
            for m in group.members.values()
        ],
    )


def group_metadata_batch(group: str, value, now_ms: int) -> bytearray:
    b = RecordBatchBuilder()
    b.append(now_ms, encode_group_key(group), encode_group_value(value))
    return bytearray(b.build())


def tombstone_batch(group: str, tps: Iterable[tuple[str, int]], now_ms: int, *, group_record: bool) -> bytearray:
    """Tombstones for the group's offsets of ``tps`` and, with ``group_record``, for its group metadata."""
    b = RecordBatchBuilder()
    for topic, partition in tps:
        b.append(now_ms, encode_offset_key(group, topic, partition), None)
    if group_record:
        b.append(now_ms, encode_group_key(group), None)
    return bytearray(b.build())


def coordinator_records_batch(records: Iterable[CoordinatorRecord], now_ms: int) -> bytearray:
    """One batch of consumer group records (``record_codec``), in order; a tombstone has a null value."""
    b = RecordBatchBuilder()
    for rec in records:
        key, value = encode_record(rec)
        b.append(now_ms, key, value)
    return bytearray(b.build())
