"""The records of one ShareFetch partition answer that this member acquired, as pure code.

A ShareFetch answer's ``PartitionData`` holds ``records`` (whole record batches as the log holds them; they may
include offsets another member acquired) and ``acquired_records`` (``first_offset``, ``last_offset``,
``delivery_count`` ranges: what this member may deliver). ``decode_acquired``:

* walks the batches with the Fetch path's ``fetcher.split_fetched`` (v0/v1 entries converted, CRCs checked with
  ``check.crcs``, control batches skipped);
* delivers the records at acquired offsets, in offset order, as ``ConsumerRecord``s carrying their range's
  ``delivery_count``, keys and values deserialized; records at offsets not acquired are skipped;
* reports every acquired offset with no record (removed by compaction, a transaction marker) as a gap (acknowledged
  as GAP, so the broker archives it);
* a record whose key or value does not deserialize becomes a ``RecordError`` in its place (the consumer releases it
  and raises the error, after the records before it), as Kafka's ``ShareCompletedFetch``;
* corrupt record data raises ``CorruptAcquiredData`` naming the acquired offsets (the consumer rejects them, as
  Kafka does with a batch that fails its CRC).

Stateless and thread-safe.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.client.core.fetcher import split_fetched
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.serialization import DeserializeFn, SerializationError
from spark_kafkalog.client.types import ConsumerRecord, TopicPartition

__all__ = ["AcquiredRange", "CorruptAcquiredData", "RecordError", "acquired_ranges", "decode_acquired"]


@dataclass(frozen=True)
class AcquiredRange:
    """One AcquiredRecords entry: offsets ``[first_offset, last_offset]`` delivered for the ``delivery_count``-th time."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class RecordError:
    """An acquired record that could not be deserialized, in the place of its ``ConsumerRecord``."""

    offset: int
    error: SerializationError


class CorruptAcquiredData(KafkaClientError):
    """The record data of a ShareFetch answer failed its checks; ``offsets`` are the acquired offsets it held."""

    def __init__(self, message: str, offsets: list[int], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.offsets = offsets


def acquired_ranges(wire: Iterable[Any]) -> list[AcquiredRange]:
    """The wire's ``acquired_records`` entries as sorted ``AcquiredRange``s (empty or inverted ranges dropped)."""
    out = [AcquiredRange(a.first_offset, a.last_offset, a.delivery_count) for a in wire]
    return sorted((a for a in out if a.last_offset >= a.first_offset), key=lambda a: a.first_offset)


class _Acquired:
    """Delivery count lookup by offset over sorted, disjoint ranges."""

    def __init__(self, ranges: Sequence[AcquiredRange]) -> None:
        self._ranges = ranges
        self._firsts = [r.first_offset for r in ranges]

    def delivery_count(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._firsts, offset) - 1
        if i >= 0 and offset <= self._ranges[i].last_offset:
            return self._ranges[i].delivery_count
        return None

    def offsets(self) -> Iterable[int]:
        for r in self._ranges:
            yield from range(r.first_offset, r.last_offset + 1)


def decode_acquired(
    records: Any,
    tp: TopicPartition,
    ranges: Sequence[AcquiredRange],
    deserialize_key: DeserializeFn,
    deserialize_value: DeserializeFn,
    *,
    check_crcs: bool = True,
) -> tuple[list[ConsumerRecord | RecordError], list[int]]:
    """(the acquired records of ``records`` in offset order, the acquired offsets without a record); see the module
    docstring. ``ranges`` as ``acquired_ranges`` returns them."""
    if not ranges:
        return [], []
    acquired = _Acquired(ranges)
    try:
        walk = split_fetched(
            records,
            tp,
            ranges[0].first_offset,
            ranges[-1].last_offset + 1,
            log_start_offset=-1,
            high_watermark=-1,
            last_stable_offset=-1,
            check_crcs=check_crcs,
        )
    except KafkaClientError as e:
        raise CorruptAcquiredData(
            f"ShareFetch of {tp}: {e}; its acquired records are rejected",
            list(acquired.offsets()),
            error_code=e.error_code,
            retriable=False,
            topic=tp.topic,
            partition=tp.partition,
        ) from None
    out: list[ConsumerRecord | RecordError] = []
    found: set[int] = set()
    topic, partition = tp.topic, tp.partition
    for fetched in walk.batches:
        timestamp_type = fetched.batch.header().timestamp_type
        for record in fetched.batch.records():
            count = acquired.delivery_count(record.offset)
            if count is None or record.offset in found:
                continue
            found.add(record.offset)
            headers = record.headers
            try:
                key = deserialize_key(record.key, topic, headers)
                value = deserialize_value(record.value, topic, headers)
            except SerializationError as e:
                out.append(RecordError(record.offset, _located(e, tp, record.offset)))
                continue
            out.append(
                ConsumerRecord(
                    topic, partition, record.offset, record.timestamp, timestamp_type, key, value, headers, count
                )
            )
    gaps = [offset for offset in acquired.offsets() if offset not in found]
    return out, gaps


def _located(error: SerializationError, tp: TopicPartition, offset: int) -> SerializationError:
    error.partition = tp.partition
    error.offset = offset
    error.add_context(
        f"record at offset {offset} of partition {tp.partition}; it was released, so it is delivered again "
        "(and archived once the group's delivery count limit is reached)"
    )
    return error
