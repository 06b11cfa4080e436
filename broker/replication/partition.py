"""One topic-partition hosted by this broker: its log, its role (leader or follower), leader epoch, ISR and
high watermark.

The role comes from the partition state the controller writes to the registry
(``/brokers/topics/<t>/partitions/<p>/state``). As leader, the partition appends producer batches and
moves the high watermark to the smallest log end offset among the in-sync replicas; with replication
factor 1 (this issue) the ISR is the leader alone, so the high watermark follows the log end offset.
``data_notifier`` fires whenever new data becomes visible (the high watermark moved), waking long-poll
fetches and acks=all produces.

Concurrency: event-loop only (the log's own background thread does retention and flushing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spark_kafkalog.protocol import ErrorCode

from .notifier import Notifier

if TYPE_CHECKING:
    from broker.cluster.registry import PartitionState
    from broker.log import AppendInfo, PartitionLog


@dataclass(frozen=True)
class TopicPartition:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class Partition:
    def __init__(self, tp: TopicPartition, broker_id: int, log: PartitionLog) -> None:
        self.tp = tp
        self.broker_id = broker_id
        self.log = log
        self.leader_id = -1
        self.leader_epoch = -1
        self.isr: tuple[int, ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.data_notifier = Notifier()

    def __repr__(self) -> str:
        return f"Partition({self.tp}, leader={self.leader_id}, epoch={self.leader_epoch}, isr={self.isr})"

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def apply_state(self, state: PartitionState, replicas: tuple[int, ...]) -> None:
        """Take the role the controller assigned; a new epoch as leader starts a new leader epoch in the log."""
        self.replicas = tuple(replicas)
        self.isr = tuple(state.isr)
        was_leader = self.is_leader
        self.leader_id = state.leader
        self.leader_epoch = state.leader_epoch
        if self.is_leader:
            self.maybe_advance_high_watermark()
        elif was_leader:
            self.data_notifier.notify()  # waiters re-check and find NOT_LEADER_OR_FOLLOWER

    def check_leader_epoch(self, current_leader_epoch: int) -> ErrorCode:
        """KIP-320 fencing: a client that knows a newer or older leader epoch than ours gets an error."""
        if current_leader_epoch < 0 or current_leader_epoch == self.leader_epoch:
            return ErrorCode.NONE
        if current_leader_epoch < self.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        return ErrorCode.UNKNOWN_LEADER_EPOCH

    def append_as_leader(self, records, *, required_acks: int) -> AppendInfo:
        """Append producer batches (v2, offsets unassigned). Raises ``LogAppendError`` with the error code."""
        from broker.log import LogAppendError

        min_insync_replicas = self.log.config.min_insync_replicas
        if required_acks == -1 and len(self.isr) < min_insync_replicas:
            raise LogAppendError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"{self.tp}: ISR {list(self.isr)} is smaller than min.insync.replicas={min_insync_replicas}",
            )
        info = self.log.append_as_leader(records, leader_epoch=self.leader_epoch)
        if not info.duplicate:
            self.maybe_advance_high_watermark()
        return info

    def maybe_advance_high_watermark(self) -> None:
        """With the leader as the only in-sync replica, everything appended is committed."""
        if self.isr in ((), (self.broker_id,)):
            leo = self.log.log_end_offset
            if self.log.high_watermark != leo:
                self.log.high_watermark = leo
                self.data_notifier.notify()
