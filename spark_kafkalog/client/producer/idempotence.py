"""Idempotent producer state: the producer id and epoch from InitProducerId, and per-partition sequences.

Every batch of an idempotent producer carries (producer id, epoch, base sequence); the broker accepts a
partition's batches only in sequence order and answers a duplicate (a retry of an appended batch) with
success, so retries never duplicate or reorder records. Sequences are assigned when a batch is first sent
and kept across its retries; they are int32 and wrap to 0 after 2**31-1, as in Kafka.

When the sequence chain of a partition is broken for good (a sequenced batch expired or failed, or the
broker lost our producer state: UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_EPOCH), the state asks for a
*reset*: once nothing is in flight the sender gets a new producer id, sequences restart at 0 and queued
batches are re-stamped. Owned by the sender thread; not thread-safe.
"""

from __future__ import annotations

from spark_kafkalog.client.producer.producer_batch import ProducerBatch
from spark_kafkalog.client.types import TopicPartition

__all__ = ["IdempotenceState", "increment_sequence"]

_INT32_MAX = 2147483647


def increment_sequence(sequence: int, increment: int) -> int:
    """Kafka's ``DefaultRecordBatch.incrementSequence``: int32 sequences wrap around to 0."""
    if sequence > _INT32_MAX - increment:
        return increment - (_INT32_MAX - sequence) - 1
    return sequence + increment


class IdempotenceState:
    def __init__(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.transactional = False  # batches carry the transactional attribute (a transactional producer)
        self.needs_reset = False
        self._next_sequence: dict[TopicPartition, int] = {}
        self.recovering: set[TopicPartition] = set()

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0 and not self.needs_reset

    def set_producer_id(self, producer_id: int, producer_epoch: int) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.needs_reset = False
        self._next_sequence.clear()
        self.recovering.clear()

    def request_reset(self) -> None:
        self.needs_reset = True

    def next_sequence(self, tp: TopicPartition) -> int:
        return self._next_sequence.get(tp, 0)

    def prepare(self, batch: ProducerBatch) -> None:
        """Stamp a batch about to be sent; a batch sent before under the current id keeps its sequence."""
        if (
            batch.producer_id == self.producer_id
            and batch.producer_epoch == self.producer_epoch
            and batch.base_sequence >= 0
        ):
            return
        sequence = self._next_sequence.get(batch.tp, 0)
        batch.stamp(self.producer_id, self.producer_epoch, sequence, self.transactional)
        self._next_sequence[batch.tp] = increment_sequence(sequence, batch.record_count)

    def is_current(self, batch: ProducerBatch) -> bool:
        return batch.producer_id == self.producer_id and batch.producer_epoch == self.producer_epoch
