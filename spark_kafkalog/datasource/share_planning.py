"""Share-group read mode: the offset JSON of a share batch, its planning into tasks, the tasks' filter (pure).

A micro-batch of a share-group read (``shareGroup``) is the set of records the driver's share consumer
acquired for it. Its end offset, which Spark keeps in the checkpoint's ``offsets/<batch>`` file, is::

    {"shareGroup": "orders-workers", "batch": 7, "acquired": {"orders": {"0": [[10, 19], [25, 25]], "2": [[4, 4]]}}}

- ``shareGroup``: the group (a checkpoint restarted with another group is refused);
- ``batch``: the share batch sequence, 0 for the initial offset (nothing acquired), +1 per batch, so two
  batches never have the same offset even when they acquired the same offsets again (redelivery);
- ``acquired``: per topic-partition the acquired offsets as sorted, disjoint, non-adjacent inclusive
  ``[first, last]`` ranges (Kafka's AcquiredRecords form). A range may cover offsets with no record
  (compaction, transaction markers): the tasks keep the records they find.

``plan_share_partitions(end)`` makes one ``ShareRange`` per topic-partition of the batch; a task reads it
with ``read_spans`` (ranges less than ``max_gap`` offsets apart are fetched as one span, so records other
members acquired in between are fetched and dropped instead of costing a fetch each) and keeps the rows
``acquired_mask`` selects. Everything here is immutable and picklable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from spark_kafkalog.datasource.offsets import TopicPartition
from spark_kafkalog.datasource.planning import OffsetRange

__all__ = [
    "DEFAULT_MAX_GAP",
    "Ranges",
    "ShareBatchOffset",
    "ShareOffsetError",
    "ShareRange",
    "acquired_mask",
    "merge_offset_ranges",
    "plan_share_partitions",
    "read_spans",
]

Ranges = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent inclusive ``(first, last)`` offset ranges."""

DEFAULT_MAX_GAP = 4096
"""Offsets between two acquired ranges up to which a task fetches them as one span."""

_EXAMPLE = '{"shareGroup":"g","batch":3,"acquired":{"topic":{"0":[[10,19]]}}}'


class ShareOffsetError(ValueError):
    """A checkpointed offset that is not a share batch of this query (another group, another mode, corrupt)."""


def merge_offset_ranges(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Inclusive ranges sorted and merged (overlapping or adjacent ones become one)."""
    out: list[list[int]] = []
    for first, last in sorted(ranges):
        if first > last:
            raise ValueError(f"offset range [{first}, {last}] ends before it starts")
        if out and first <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([first, last])
    return tuple((a, b) for a, b in out)


def range_count(ranges: Ranges) -> int:
    """Offsets covered by ``ranges``."""
    return sum(last - first + 1 for first, last in ranges)


@dataclass(frozen=True)
class ShareBatchOffset:
    """The end offset of one share batch (see the module docstring)."""

    group_id: str
    batch: int
    acquired: Mapping[TopicPartition, Ranges] = field(default_factory=dict)

    @property
    def records(self) -> int:
        """Offsets acquired (an upper bound of the records: ranges may hold gaps)."""
        return sum(range_count(r) for r in self.acquired.values())

    def to_json(self) -> dict:
        topics: dict[str, dict[str, list[list[int]]]] = {}
        for tp in sorted(self.acquired):
            topics.setdefault(tp.topic, {})[str(tp.partition)] = [[a, b] for a, b in self.acquired[tp]]
        return {"shareGroup": self.group_id, "batch": self.batch, "acquired": topics}

    @classmethod
    def from_json(cls, value: object, group_id: str) -> ShareBatchOffset:
        """Parse a checkpointed offset, checking its shape and that it belongs to ``group_id``."""
        if not isinstance(value, Mapping) or "shareGroup" not in value:
            raise ShareOffsetError(
                f"the checkpoint's offset {value!r} was not written by a share-group read (expected e.g. "
                f"{_EXAMPLE}); a query cannot switch to shareGroup on an existing checkpoint: use a new "
                "checkpointLocation"
            )
        if value["shareGroup"] != group_id:
            raise ShareOffsetError(
                f"the checkpoint was written by a query reading as share group {value['shareGroup']!r}, not "
                f'{group_id!r}: restart with .option("shareGroup", {value["shareGroup"]!r}) or use a new '
                "checkpointLocation"
            )
        batch = value.get("batch")
        topics = value.get("acquired")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0 or not isinstance(topics, Mapping):
            raise ShareOffsetError(f"bad share batch offset {value!r}; expected e.g. {_EXAMPLE}")
        acquired: dict[TopicPartition, Ranges] = {}
        for topic, partitions in topics.items():
            if not isinstance(partitions, Mapping):
                raise ShareOffsetError(
                    f"bad entry {topic!r} in the share batch offset {value!r}; expected e.g. {_EXAMPLE}"
                )
            for key, ranges in partitions.items():
                acquired[TopicPartition(topic, _partition(key, value))] = _ranges(ranges, value)
        return cls(group_id, batch, acquired)


def _partition(key: object, whole: object) -> int:
    try:
        partition = int(str(key))
    except ValueError:
        partition = -1
    if partition < 0:
        raise ShareOffsetError(f"bad partition {key!r} in the share batch offset {whole!r}; expected e.g. {_EXAMPLE}")
    return partition


def _ranges(value: object, whole: object) -> Ranges:
    def bad() -> ShareOffsetError:
        return ShareOffsetError(
            f"bad offset ranges {value!r} in the share batch offset {whole!r}; expected e.g. {_EXAMPLE}"
        )

    if not isinstance(value, list):
        raise bad()
    pairs: list[tuple[int, int]] = []
    for item in value:
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
            or not 0 <= item[0] <= item[1]
        ):
            raise bad()
        pairs.append((item[0], item[1]))
    merged = merge_offset_ranges(pairs)
    if merged != tuple(pairs):
        raise bad()  # written sorted and merged: anything else is not ours
    return merged


@dataclass(frozen=True, order=True)
class ShareRange:
    """One task of a share batch: the acquired offset ranges of one topic-partition."""

    topic: str
    partition: int
    ranges: Ranges

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def plan_share_partitions(end: ShareBatchOffset) -> list[ShareRange]:
    """One ``ShareRange`` per topic-partition that acquired something, in topic-partition order."""
    return [ShareRange(tp.topic, tp.partition, r) for tp, r in sorted(end.acquired.items()) if r]


def read_spans(share_range: ShareRange, max_gap: int = DEFAULT_MAX_GAP) -> list[OffsetRange]:
    """The half-open offset spans a task fetches: ranges fewer than ``max_gap`` offsets apart joined."""
    spans: list[list[int]] = []
    for first, last in share_range.ranges:
        if spans and first - spans[-1][1] < max_gap:
            spans[-1][1] = last + 1
        else:
            spans.append([first, last + 1])
    return [OffsetRange(share_range.topic, share_range.partition, start, end) for start, end in spans]


def acquired_mask(offsets: np.ndarray, ranges: Ranges) -> np.ndarray:
    """Which of ``offsets`` (any order) fall in ``ranges``."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if not ranges:
        return np.zeros(len(offsets), dtype=bool)
    firsts = np.fromiter((a for a, _ in ranges), dtype=np.int64, count=len(ranges))
    lasts = np.fromiter((b for _, b in ranges), dtype=np.int64, count=len(ranges))
    index = np.searchsorted(firsts, offsets, side="right") - 1
    inside = index >= 0
    return inside & (offsets <= lasts[np.maximum(index, 0)])
