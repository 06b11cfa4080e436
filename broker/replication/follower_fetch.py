"""Follower fetching (KIP-392) for the Fetch handler: which local replica serves a consumer, and the leader's
preferred read replica.

``partition_to_read``: a replica Fetch (``replica_id`` >= 0) and a consumer Fetch before v11 read only from
the leader (Kafka's ``FetchParams.fetchOnlyLeader``); a consumer Fetch v11+ may also read from a follower
replica hosted here, up to that follower's high watermark (the leader's, as its last Fetch answer told it,
capped at its own log end). A follower that is no longer in the partition's ISR (as the registry's partition
state says) answers NOT_LEADER_OR_FOLLOWER, so the client drops it as its read replica and goes back to the
leader (kafkalog's choice: Kafka's follower keeps serving, and its client stays until ``metadata.max.age.ms``).

``preferred_read_replica``: on the leader, with ``replica.selector.class`` set, the replica the selector picks
for the client's ``rack_id`` among the leader and the followers that are in the ISR, registered with an
endpoint on the client's listener and hold the fetch offset (log start <= offset <= log end, as the followers'
last Fetch told the leader); -1 when that is the leader. Kafka's ``ReplicaManager.findPreferredReadReplica``.
``redirect`` fills the answer the leader gives then: no records, its high watermark, last stable offset and
log start, and ``preferred_read_replica``; the Fetch answers at once (Kafka's ``hasPreferredReadReplica``).

``record_served`` counts what a follower served to consumers (``BrokerMetrics.follower_fetch``), so the broker
that served a consumer can be seen in the metrics. Concurrency: event-loop only, as the partitions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spark_kafkalog.protocol import ErrorCode

from .replica_selector import PartitionView, ReplicaView

if TYPE_CHECKING:
    from .partition import Partition

ReplicaManager = Any  # broker.replication.replica_manager.ReplicaManager, which calls this module (no import cycle)

PREFERRED_REPLICA_MIN_VERSION = 11
"""Fetch v11 added ``rack_id`` and ``preferred_read_replica``; from it a consumer may read from a follower."""


def partition_to_read(
    replica_manager: ReplicaManager, topic: str, partition: int, *, from_follower: bool, version: int
) -> tuple[Partition | None, ErrorCode]:
    """The local replica of ``topic``-``partition`` that may answer this Fetch, else the error to answer."""
    part, code = replica_manager.leader_partition(topic, partition)
    if part is not None or from_follower or version < PREFERRED_REPLICA_MIN_VERSION:
        return part, code
    local = replica_manager.get_partition(topic, partition)
    if local is None or not local.is_follower:
        return None, code
    if local.broker_id not in local.isr:
        return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
    return local, ErrorCode.NONE


def preferred_read_replica(
    replica_manager: ReplicaManager,
    brokers: Any,
    part: Partition,
    *,
    rack_id: str,
    listener: str,
    fetch_offset: int,
) -> int:
    """The broker id the client should read ``part`` from, or -1 for this leader (see the module docstring).
    ``brokers`` is ``MetadataCache.brokers`` (the registered brokers, with their racks and endpoints)."""
    selector = replica_manager.replica_selector
    if selector is None or not part.is_leader:
        return -1
    now_ms = replica_manager.now_ms()
    leader_info = brokers.get(part.broker_id)
    leader = ReplicaView(
        part.broker_id, leader_info.rack if leader_info is not None else None, part.log.log_end_offset, 0
    )
    views = [leader]
    for broker_id, st in part.followers.items():
        info = brokers.get(broker_id)
        if (
            broker_id in part.isr
            and info is not None
            and info.listener_endpoint(listener) is not None
            and st.log_start_offset <= fetch_offset <= st.log_end_offset
        ):
            views.append(ReplicaView(broker_id, info.rack, st.log_end_offset, max(now_ms - st.last_caught_up_ms, 0)))
    chosen = selector.select(rack_id, PartitionView(tuple(views), leader))
    return -1 if chosen.broker_id == part.broker_id else chosen.broker_id


def redirect(entry: Any, part: Partition, preferred: int) -> None:
    """Fill the leader's answer naming ``preferred`` as the read replica: no records, the partition's offsets."""
    plog = part.log
    entry.high_watermark = plog.high_watermark
    entry.last_stable_offset = plog.last_stable_offset
    entry.log_start_offset = plog.log_start_offset
    entry.preferred_read_replica = preferred
    entry.records = b""


def record_served(metrics: Any, replica_manager: ReplicaManager, responses: Any) -> None:
    """Count the partitions (and their record bytes) this broker answered to a consumer as a follower."""
    for topic in responses:
        name = getattr(topic, "topic", None)
        topic_id = getattr(topic, "topic_id", None)
        if not name and topic_id is not None:
            name = replica_manager.metadata.topic_by_id(topic_id)
        if not name:
            continue
        for p in topic.partitions:
            if p.error_code != ErrorCode.NONE:
                continue
            local = replica_manager.get_partition(name, p.partition_index)
            if local is not None and local.is_follower:
                metrics.follower_fetch(name, len(p.records) if p.records is not None else 0)
