"""Log compaction (``cleanup.policy=compact``): keep the latest record per key in the cleanable part of a log.

The cleanable part is the run of segments from the log start up to (not including) the first segment that
is the active one, not wholly below the last stable offset (the high watermark, or the first offset of the
oldest ongoing transaction: nothing at or beyond the first unstable offset is cleaned), or whose newest
record is younger than ``min.compaction.lag.ms``. Its *dirty* part starts at ``PartitionLog.first_dirty_offset`` (the cleaner's
checkpoint). A log is cleaned when dirty bytes / cleanable bytes >= ``min.cleanable.dirty.ratio``.

One cleaning:

1. builds an offset map ``key -> last offset`` over the dirty part, leaving out records of aborted
   transactions (the ``.txnindex`` entries: a transactional batch of producer P at offsets within an
   aborted transaction's [first offset, marker offset]);
2. rewrites the cleanable segments in groups (at most ``segment.bytes`` of source data each) into new
   segments ``<base>.log.cleaned``: records of aborted transactions never survive; a record survives
   when no later record of its key is in the map,
   a tombstone (null value) only while its segment was written less than ``delete.retention.ms`` ago, a
   keyless record never. Offsets are kept (gaps are expected). Each v2 batch keeps its base offset, last
   offset delta, partition leader epoch and producer fields; a batch keeping every record is copied
   byte for byte, one keeping some is re-encoded with its codec, one keeping none is dropped, except
   that an empty batch (header only) is kept when it is the last batch of its producer or of the group
   (so producer state and the group's offset range survive). Control batches (transaction markers) are
   kept as they are, always: Kafka removes a marker once its transaction's data is gone and
   ``delete.retention.ms`` passed; keeping it is allowed (it costs one small batch per transaction).
   Committed transactional records are compacted like any other. The new segment gets the
   ``.txnindex`` entries of the segments it replaces;
3. swaps each group in (``PartitionLog.swap_cleaned``: ``.cleaned`` -> ``.swap``, old segments ->
   ``.deleted``, ``.swap`` -> final; the loader finishes an interrupted swap) and moves the checkpoint.

Runs on the LogManager's background thread, one log at a time; readers keep reading the old segments
they already found. If the writer changed the segment list meanwhile (truncation, DeleteRecords) the
swap is abandoned and the output deleted.
"""

from __future__ import annotations

import logging
import os
import struct
from typing import NamedTuple

from broker.log.config import LONG_MAX
from broker.log.log_loader import CLEANED_SUFFIX
from broker.log.partition_log import PartitionLog
from broker.log.segment import MAX_RELATIVE_OFFSET, LogSegment
from broker.log.transaction_index import AbortedTxn
from spark_kafkalog.records import CorruptRecordError, RecordBatchBuilder, decode_batch_records
from spark_kafkalog.records.batch import (
    ATTRIBUTES_OFFSET,
    BATCH_HEADER_SIZE,
    CODEC_MASK,
    CONTROL_BIT,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    BatchHeader,
)
from spark_kafkalog.records.crc import crc32c

__all__ = ["CleanableRange", "CleanerStats", "clean_log", "cleanable_range", "compaction_overdue"]

log = logging.getLogger("kafkalog.log.cleaner")

_LAST_OFFSET_DELTA = struct.Struct(">i")
_CRC = struct.Struct(">I")


class CleanableRange(NamedTuple):
    segments: tuple[LogSegment, ...]  # the cleanable segments
    first_dirty_offset: int
    end_offset: int  # first offset not cleanable (a segment base)
    clean_bytes: int
    dirty_bytes: int

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


class CleanerStats(NamedTuple):
    topic: str
    partition: int
    first_dirty_offset: int
    end_offset: int
    segments_in: int
    segments_out: int
    bytes_in: int
    bytes_out: int
    records_in: int
    records_out: int


def cleanable_range(plog: PartitionLog, now_ms: int) -> CleanableRange | None:
    """The part of ``plog`` the cleaner may rewrite now, or None when it has no dirty data."""
    segments = plog.segments
    config = plog.config
    hw = plog.last_stable_offset
    end_index = len(segments) - 1
    for i, segment in enumerate(segments[:-1]):
        if segments[i + 1].base_offset > hw:
            end_index = i
            break
        newest = segment.largest_timestamp if segment.largest_timestamp >= 0 else segment.last_modified_ms
        if config.min_compaction_lag_ms > 0 and now_ms - newest < config.min_compaction_lag_ms:
            end_index = i
            break
    cleanable = segments[:end_index]
    if not cleanable:
        return None
    end = segments[end_index].base_offset
    first_dirty = max(plog.first_dirty_offset, plog.log_start_offset)
    if first_dirty >= end:
        return None
    clean = sum(s.size for s in cleanable if s.next_offset <= first_dirty)
    dirty = sum(s.size for s in cleanable if s.next_offset > first_dirty)
    return CleanableRange(cleanable, first_dirty, end, clean, dirty)


def compaction_overdue(cleanable: CleanableRange, max_compaction_lag_ms: int, now_ms: int) -> bool:
    """Whether the oldest dirty record is older than ``max.compaction.lag.ms``: then the log is compacted
    whatever its dirty ratio (Kafka compares the first batch timestamp of each dirty segment; a segment
    without timestamps never forces a cleaning)."""
    if max_compaction_lag_ms >= LONG_MAX:
        return False
    for segment in cleanable.segments:
        if segment.next_offset <= cleanable.first_dirty_offset:
            continue
        headers = segment.iter_headers(0)
        try:
            first = next(headers, None)
        except (CorruptRecordError, OSError, ValueError):
            first = None  # unreadable or closed under us: the next round sees the new segment list
        finally:
            headers.close()
        if first is not None and first[1].max_timestamp > 0 and now_ms - first[1].max_timestamp > max_compaction_lag_ms:
            return True
    return False


def _batches(segment: LogSegment):
    """``(header, bytes)`` of every batch of a (non-active) segment (its file pinned meanwhile)."""
    fd = segment.file.pin()
    try:
        for position, header in segment.iter_headers(0):
            yield header, os.pread(fd, header.batch_length + LOG_OVERHEAD, position)
    finally:
        segment.file.release()


class _Aborted:
    """The aborted transactions of a log, by producer: is a transactional batch part of one?"""

    def __init__(self, entries: list[AbortedTxn]) -> None:
        self._by_producer: dict[int, list[tuple[int, int]]] = {}
        for entry in entries:
            self._by_producer.setdefault(entry.producer_id, []).append((entry.first_offset, entry.last_offset))

    def __contains__(self, header: BatchHeader) -> bool:
        if not header.attributes & TRANSACTIONAL_BIT or header.attributes & CONTROL_BIT:
            return False
        ranges = self._by_producer.get(header.producer_id)
        return ranges is not None and any(first <= header.base_offset <= last for first, last in ranges)


_NO_ABORTS = _Aborted([])


def _build_offset_map(segments, first_dirty: int, aborted: _Aborted = _NO_ABORTS) -> dict[bytes, int]:
    offsets: dict[bytes, int] = {}
    for segment in segments:
        if segment.next_offset <= first_dirty:
            continue
        for header, data in _batches(segment):
            if header.attributes & CONTROL_BIT or header in aborted:
                continue
            for record in decode_batch_records(data, header=header):
                if record.key is not None and record.offset >= first_dirty:
                    offsets[record.key] = record.offset
    return offsets


def _empty_batch(header: BatchHeader) -> bytes:
    """A header-only batch with the original offsets, epoch and producer fields (no records)."""
    attributes = header.attributes & (TIMESTAMP_TYPE_BIT | TRANSACTIONAL_BIT | CONTROL_BIT)
    data = bytearray(
        HEADER_STRUCT.pack(
            header.base_offset,
            BATCH_HEADER_SIZE - LOG_OVERHEAD,
            header.partition_leader_epoch,
            2,
            0,
            attributes,
            header.last_offset_delta,
            header.max_timestamp,
            header.max_timestamp,
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            0,
        )
    )
    _CRC.pack_into(data, 17, crc32c(memoryview(data)[ATTRIBUTES_OFFSET:]))
    return bytes(data)


def _rebuild_batch(header: BatchHeader, records) -> bytes:
    builder = RecordBatchBuilder(
        header.attributes & CODEC_MASK,
        base_offset=header.base_offset,
        partition_leader_epoch=header.partition_leader_epoch,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=bool(header.attributes & TRANSACTIONAL_BIT),
        timestamp_type=header.timestamp_type,
    )
    for record in records:
        builder.append(
            record.timestamp, record.key, record.value, record.headers, offset_delta=record.offset - header.base_offset
        )
    data = bytearray(builder.build())
    # keep the original offset range: the last offset delta is covered by the CRC, so recompute it
    _LAST_OFFSET_DELTA.pack_into(data, 23, header.last_offset_delta)
    _CRC.pack_into(data, 17, crc32c(memoryview(data)[ATTRIBUTES_OFFSET:]))
    return bytes(data)


def _groups(segments, max_bytes: int) -> list[list[LogSegment]]:
    groups: list[list[LogSegment]] = []
    for segment in segments:
        if groups:
            group = groups[-1]
            if (
                sum(s.size for s in group) + segment.size <= max_bytes
                and segment.next_offset - 1 - group[0].base_offset <= MAX_RELATIVE_OFFSET
            ):
                group.append(segment)
                continue
        groups.append([segment])
    return groups


def clean_log(plog: PartitionLog, now_ms: int, *, force: bool = False) -> CleanerStats | None:
    """Compact ``plog`` once if its dirty ratio reaches ``min.cleanable.dirty.ratio`` (or ``force``)."""
    config = plog.config
    cleanable = cleanable_range(plog, now_ms)
    if cleanable is None:
        return None
    if (
        not force
        and cleanable.dirty_ratio < config.min_cleanable_dirty_ratio
        and not compaction_overdue(cleanable, config.max_compaction_lag_ms, now_ms)
    ):
        return None
    for segment in cleanable.segments:
        if not segment.file.acquire():
            return None  # the list changed under us; try again next round
    try:
        aborted = _Aborted(plog.aborted_transactions(plog.log_start_offset, cleanable.end_offset))
        offset_map = _build_offset_map(cleanable.segments, cleanable.first_dirty_offset, aborted)
        stats = [0, 0, 0, 0, 0]  # segments out, bytes in, bytes out, records in, records out
        for group in _groups(cleanable.segments, config.segment_bytes):
            new = _clean_group(plog, group, offset_map, now_ms, stats, aborted)
            if not plog.swap_cleaned(group, new):
                new.file.close()
                new.delete_files()
                log.info("%s: segment list changed during cleaning; abandoned", plog.dir.name)
                return None
            stats[0] += 1
    finally:
        for segment in cleanable.segments:
            segment.file.release()
    plog.first_dirty_offset = max(plog.first_dirty_offset, cleanable.end_offset)
    result = CleanerStats(
        plog.topic,
        plog.partition,
        cleanable.first_dirty_offset,
        cleanable.end_offset,
        len(cleanable.segments),
        stats[0],
        stats[1],
        stats[2],
        stats[3],
        stats[4],
    )
    log.info(
        "%s: cleaned offsets below %d: %d -> %d bytes, %d -> %d records",
        plog.dir.name,
        cleanable.end_offset,
        stats[1],
        stats[2],
        stats[3],
        stats[4],
    )
    return result


def _clean_group(
    plog: PartitionLog,
    group: list[LogSegment],
    offset_map: dict[bytes, int],
    now_ms: int,
    stats: list[int],
    aborted: _Aborted = _NO_ABORTS,
) -> LogSegment:
    config = plog.config
    new = LogSegment.create(plog.dir, group[0].base_offset, now_ms, suffix=CLEANED_SUFFIX)
    last_header = None
    for segment in group:
        drop_tombstones = now_ms - segment.last_modified_ms > config.delete_retention_ms
        stats[1] += segment.size
        for header, data in _batches(segment):
            last_header = header
            if header.attributes & CONTROL_BIT:
                _append(new, data, header, config.index_interval_bytes, now_ms)
                continue
            records = decode_batch_records(data, header=header)
            is_aborted = header in aborted
            kept = [
                r
                for r in records
                if not is_aborted
                and r.key is not None
                and offset_map.get(r.key, -1) <= r.offset
                and not (r.value is None and drop_tombstones)
            ]
            stats[3] += len(records)
            stats[4] += len(kept)
            if len(kept) == len(records):
                out = data
            elif kept:
                out = _rebuild_batch(header, kept)
            elif _is_last_producer_batch(plog, header) or (segment is group[-1] and _is_last(segment, header)):
                out = _empty_batch(header)
            else:
                continue
            _append(new, out, header, config.index_interval_bytes, now_ms)
    if new.size == 0 and last_header is not None:
        _append(new, _empty_batch(last_header), last_header, config.index_interval_bytes, now_ms)
    for segment in group:
        for entry in segment.txn_index.entries:
            new.txn_index.append(entry)
    new.on_become_inactive()
    new.flush()
    newest_write = max(s.last_modified_ms for s in group)
    os.utime(new.file.path, ns=(newest_write * 1_000_000, newest_write * 1_000_000))
    new.last_modified_ms = newest_write
    stats[2] += new.size
    return new


def _append(segment: LogSegment, data: bytes, header: BatchHeader, interval: int, now_ms: int) -> None:
    last = header.base_offset + header.last_offset_delta
    max_ts = HEADER_STRUCT.unpack_from(data)[8]
    segment.append(data, [(0, len(data), header.base_offset, last, max_ts)], 0, now_ms, interval)


def _is_last(segment: LogSegment, header: BatchHeader) -> bool:
    return header.base_offset + header.last_offset_delta == segment.next_offset - 1


def _is_last_producer_batch(plog: PartitionLog, header: BatchHeader) -> bool:
    if header.producer_id < 0:
        return False
    state = plog.producer_state(header.producer_id)
    return state is not None and state.last_offset == header.base_offset + header.last_offset_delta
