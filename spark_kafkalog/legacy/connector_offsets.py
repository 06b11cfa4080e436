"""Where a ``ConsumerConnector`` keeps its group's offsets: ZooKeeper, Kafka, or both (Kafka 0.8.2's
``offsets.storage`` and ``dual.commit.enabled``).

An offset is the next one to consume (what 0.8 wrote; Kafka's committed offsets mean the same).

* ``zookeeper``: ``/consumers/<group>/offsets/<topic>/<partition>`` written and read directly in ZooKeeper.
* ``kafka``: OffsetCommit (v1+, generation -1, no member id: the group has no Kafka-protocol members) and
  OffsetFetch to the group's coordinator found with FindCoordinator.
* ``dual.commit.enabled=true``: commits go to both stores and a fetch takes the larger of the two offsets,
  whichever store is primary, so the seeds' migration (zookeeper -> kafka+dual -> kafka) and its roll-back
  (kafka -> zookeeper+dual -> zookeeper) neither re-read nor skip: during the dual step the store that was
  stale catches up, and its offsets are never lower than the other's afterwards.

Thread-safe: calls are serialised by a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.legacy.zk_consumer_registry import ZkConsumerRegistry

__all__ = ["ConnectorOffsets"]

STORAGES = ("zookeeper", "kafka")


class ConnectorOffsets:
    """Fetch and commit a group's offsets in the configured store(s); see the module docstring."""

    def __init__(
        self, group: str, storage: str, dual_commit: bool, registry: ZkConsumerRegistry, admin: GroupAdmin
    ) -> None:
        if storage not in STORAGES:
            raise ValueError(f"offsets.storage must be zookeeper or kafka, not {storage!r}")
        self.group = group
        self.use_zookeeper = storage == "zookeeper" or dual_commit
        self.use_kafka = storage == "kafka" or dual_commit
        self._registry = registry
        self._admin = admin
        self._lock = threading.Lock()

    def fetch(self, partitions: Iterable[TopicPartition]) -> tuple[dict[TopicPartition, int], set[TopicPartition]]:
        """``(committed offsets, settled)`` of ``partitions``: a partition with none committed is left out of
        the offsets; ``settled`` are those every store in use holds at that offset (with dual commit, the
        others must be written again even when the offset does not move)."""
        wanted = sorted(set(partitions))
        found: list[dict[TopicPartition, int]] = []
        if not wanted:
            return {}, set()
        with self._lock:
            if self.use_zookeeper:
                zk = {}
                for tp in wanted:
                    offset = self._registry.read_offset(self.group, tp.topic, tp.partition)
                    if offset is not None and offset >= 0:
                        zk[tp] = offset
                found.append(zk)
            if self.use_kafka:
                kafka = self._admin.list_group_offsets(self.group, wanted)
                found.append({tp: om.offset for tp, om in kafka.items() if om.offset >= 0})
        out: dict[TopicPartition, int] = {}
        for store in found:
            for tp, offset in store.items():
                out[tp] = max(out.get(tp, offset), offset)
        settled = {tp for tp, offset in out.items() if all(store.get(tp) == offset for store in found)}
        return out, settled

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        if not offsets:
            return
        with self._lock:
            if self.use_zookeeper:
                for tp, offset in sorted(offsets.items()):
                    self._registry.write_offset(self.group, tp.topic, tp.partition, offset)
            if self.use_kafka:
                self._admin.commit_offsets(self.group, dict(offsets))
