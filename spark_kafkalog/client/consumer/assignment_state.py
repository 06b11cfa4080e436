"""``AssignmentState``: a consumer's assigned partitions with their positions, paused flags and the records fetched but
not yet returned - the I/O-free half of the blocking ``Consumer`` and the asyncio ``AIOConsumer`` (Java's
``SubscriptionState`` plus the fetch buffers).

The position of a partition is the offset of the next record ``poll`` returns: the first buffered record's offset
while records are buffered, else the stored position. A fetch's buffer ends where the fetch ended (``fetched_to``,
past control and aborted batches), so once the buffer drains the position moves past a trailing transaction marker,
as Java's consumer does. Replacing the assignment keeps what it knows of partitions that stay; seeking drops the
partition's buffer.

Not thread-safe: the polling thread (or the consumer's event loop) owns it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import ConsumerRecord, TopicPartition

__all__ = ["AssignmentState"]


class AssignmentState:
    """See the module docstring."""

    def __init__(self) -> None:
        self.assigned: list[TopicPartition] = []
        self.positions: dict[TopicPartition, int] = {}
        self.buffered: dict[TopicPartition, deque[ConsumerRecord]] = {}
        self.fetched_to: dict[TopicPartition, int] = {}
        self.paused: set[TopicPartition] = set()

    def assign(self, tps: list[TopicPartition]) -> None:
        """Replace the assignment (what is known of partitions that stay is kept)."""
        self.assigned = tps
        self.positions = {tp: off for tp, off in self.positions.items() if tp in tps}
        self.buffered = {tp: q for tp, q in self.buffered.items() if tp in tps}
        self.fetched_to = {tp: o for tp, o in self.fetched_to.items() if tp in tps}
        self.paused &= set(tps)

    def remove(self, partitions: Iterable[TopicPartition]) -> None:
        gone = set(partitions)
        self.assign([tp for tp in self.assigned if tp not in gone])

    def check_assigned(self, tp: TopicPartition) -> TopicPartition:
        """``tp`` as a ``TopicPartition``; raises naming it when it is not assigned."""
        tp = TopicPartition(*tp)
        if tp not in self.assigned:
            raise KafkaClientError(
                f"{tp} is not assigned to this consumer", retriable=False, topic=tp.topic, partition=tp.partition
            )
        return tp

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.paused.add(self.check_assigned(tp))

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.paused.discard(TopicPartition(*tp))

    def fetchable(self) -> list[TopicPartition]:
        """The assigned partitions that are not paused, in assignment order."""
        return [tp for tp in self.assigned if tp not in self.paused]

    def missing_positions(self, tps: Iterable[TopicPartition]) -> list[TopicPartition]:
        return [tp for tp in tps if tp not in self.positions]

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Set an assigned partition's position (``offset`` >= 0), dropping what was buffered."""
        tp = self.check_assigned(tp)
        if offset < 0:
            raise ValueError(f"seek offset for {tp} must be >= 0, got {offset}")
        self.set_position(tp, offset)

    def set_position(self, tp: TopicPartition, offset: int) -> None:
        self.positions[tp] = offset
        self.buffered.pop(tp, None)
        self.fetched_to.pop(tp, None)

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record of ``tp`` (it must have a position)."""
        buffered = self.buffered.get(tp)
        return buffered[0].offset if buffered else self.positions[tp]

    def committable(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, int]:
        """The positions of ``partitions`` (default: the assignment) that have one: what a commit stores."""
        return {
            tp: self.position(tp)
            for tp in (self.assigned if partitions is None else partitions)
            if tp in self.positions
        }

    def take_buffered(self, tp: TopicPartition, out: list[ConsumerRecord], limit: int) -> None:
        """Move ``tp``'s buffered records into ``out`` (up to ``limit`` in all), advancing its position."""
        queue = self.buffered.get(tp)
        while queue and len(out) < limit:
            record = queue.popleft()
            out.append(record)
            self.positions[tp] = record.offset + 1
        if not queue and tp in self.fetched_to:
            self.positions[tp] = max(self.positions[tp], self.fetched_to.pop(tp))
