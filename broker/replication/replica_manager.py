"""The partitions this broker hosts, kept in line with the cluster's assignments and partition states.

``apply_topic`` is called (on the event loop) whenever the registry reports a topic's assignment or
partition states: for every partition that lists this broker as a replica a log is opened or created
(with the topic's configuration) and takes the role in the state; partitions no longer assigned here
are dropped and their logs deleted. ``remove_topic`` deletes every local log of a deleted topic.

Lookups for request handlers follow Kafka's rules: a partition unknown to the cluster is
UNKNOWN_TOPIC_OR_PARTITION; one that exists but is not led here is NOT_LEADER_OR_FOLLOWER.

Concurrency: event-loop only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from spark_kafkalog.protocol import ErrorCode

from .partition import Partition, TopicPartition

if TYPE_CHECKING:
    from broker.cluster.registry import PartitionState
    from broker.log import LogConfig, LogManager
    from broker.metadata_cache import MetadataCache

log = logging.getLogger("kafkalog.replication")


class ReplicaManager:
    def __init__(self, broker_id: int, log_manager: LogManager, metadata: MetadataCache) -> None:
        self.broker_id = broker_id
        self.log_manager = log_manager
        self.metadata = metadata
        self.partitions: dict[TopicPartition, Partition] = {}
        self.leadership_listeners: list[Callable[[TopicPartition, bool], None]] = []
        """Called with (partition, is leader now) when this broker starts or stops leading a partition
        (the group coordinator loads and unloads ``__consumer_offsets`` partitions from it)."""

    def apply_topic(
        self,
        topic: str,
        replicas: dict[int, tuple[int, ...]],
        states: dict[int, PartitionState],
        config: LogConfig,
    ) -> None:
        for p, reps in replicas.items():
            tp = TopicPartition(topic, p)
            part = self.partitions.get(tp)
            if self.broker_id not in reps:
                if part is not None:
                    self._drop(tp, delete=True)
                continue
            if part is None:
                plog = self.log_manager.get_or_create_log(topic, p, config)
                part = self.partitions[tp] = Partition(tp, self.broker_id, plog)
            elif part.log.config != config:
                self.log_manager.update_topic_config(topic, config)
            state = states.get(p)
            if state is not None and (state.leader_epoch, state.leader, tuple(state.isr)) != (
                part.leader_epoch,
                part.leader_id,
                part.isr,
            ):
                was_leader = part.is_leader
                part.apply_state(state, tuple(reps))
                if part.is_leader != was_leader:
                    self._leadership_changed(tp, part.is_leader)
                log.info("%s: leader %d epoch %d isr %s", tp, state.leader, state.leader_epoch, list(state.isr))
        for tp in [tp for tp in self.partitions if tp.topic == topic and tp.partition not in replicas]:
            self._drop(tp, delete=True)

    def remove_topic(self, topic: str) -> None:
        for tp in [tp for tp in self.partitions if tp.topic == topic]:
            self._drop(tp, delete=True)

    def delete_stray_logs(self, known_topics: set[str]) -> list[str]:
        """Delete local logs of topics that no longer exist (deleted while this broker was down)."""
        removed = []
        for plog in list(self.log_manager.all_logs()):
            if plog.topic not in known_topics:
                self.log_manager.delete_log(plog.topic, plog.partition)
                removed.append(f"{plog.topic}-{plog.partition}")
        if removed:
            log.info("deleted logs of topics that no longer exist: %s", ", ".join(sorted(removed)))
        return removed

    def _drop(self, tp: TopicPartition, *, delete: bool) -> None:
        part = self.partitions.pop(tp, None)
        if part is None:
            return
        was_leader = part.is_leader
        part.leader_id = -1
        part.data_notifier.notify()
        if was_leader:
            self._leadership_changed(tp, False)
        if delete:
            self.log_manager.delete_log(tp.topic, tp.partition)

    def _leadership_changed(self, tp: TopicPartition, is_leader: bool) -> None:
        for listener in self.leadership_listeners:
            try:
                listener(tp, is_leader)
            except Exception:
                log.exception("%s: a leadership listener failed", tp)

    # -- lookups for handlers -------------------------------------------------------------------
    def get_partition(self, topic: str, partition: int) -> Partition | None:
        return self.partitions.get(TopicPartition(topic, partition))

    def leader_partition(self, topic: str, partition: int) -> tuple[Partition | None, ErrorCode]:
        part = self.partitions.get(TopicPartition(topic, partition))
        if part is not None and part.is_leader:
            return part, ErrorCode.NONE
        t = self.metadata.topics.get(topic)
        if t is None or partition not in t.replicas:
            return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
