"""The broker's view of the cluster: live brokers, topics, partition leaders and ISRs, the controller.

Every broker keeps one, filled from the cluster registry (ZooKeeper) and refreshed by its watches; it
answers Metadata requests and tells the request handlers who leads what. Snapshots are immutable:
``update`` swaps in new dicts, so a handler that read ``topics`` keeps a consistent view. Mutated only
on the broker's event loop; read anywhere.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from broker.cluster.registry import BrokerInfo, PartitionState, TopicAssignment


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    replicas: dict[int, Sequence[int]]  # partition -> replica broker ids (assignment order; first = preferred)
    states: dict[int, PartitionState] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)

    @property
    def num_partitions(self) -> int:
        return len(self.replicas)

    def leader(self, partition: int) -> int:
        st = self.states.get(partition)
        return st.leader if st is not None else -1


class MetadataCache:
    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.cluster_id: str | None = None
        self.controller_id: int | None = None
        self.brokers: dict[int, BrokerInfo] = {}
        self.topics: dict[str, TopicMetadata] = {}
        self._by_id: dict[uuid.UUID, str] = {}

    def set_brokers(self, brokers: dict[int, BrokerInfo]) -> None:
        self.brokers = dict(brokers)

    def set_topic(self, assignment: TopicAssignment, states: dict[int, PartitionState], config: dict[str, str]) -> None:
        topics = dict(self.topics)
        topics[assignment.name] = TopicMetadata(
            assignment.name, assignment.topic_id, dict(assignment.partitions), dict(states), dict(config)
        )
        self.topics = topics
        self._by_id = {t.topic_id: name for name, t in topics.items()}

    def set_partition_state(self, topic: str, partition: int, state: PartitionState | None) -> None:
        t = self.topics.get(topic)
        if t is None:
            return
        states = dict(t.states)
        if state is None:
            states.pop(partition, None)
        else:
            states[partition] = state
        topics = dict(self.topics)
        topics[topic] = TopicMetadata(t.name, t.topic_id, t.replicas, states, t.config)
        self.topics = topics

    def remove_topic(self, name: str) -> None:
        if name in self.topics:
            topics = dict(self.topics)
            del topics[name]
            self.topics = topics
            self._by_id = {t.topic_id: n for n, t in topics.items()}

    def topic_by_id(self, topic_id: uuid.UUID) -> str | None:
        return self._by_id.get(topic_id)

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        t = self.topics.get(topic)
        return None if t is None else t.states.get(partition)

    def alive(self, broker_id: int) -> bool:
        return broker_id in self.brokers


def assign_replicas(
    broker_ids: list[int],
    num_partitions: int,
    replication_factor: int,
    *,
    rng: random.Random | None = None,
    start_partition: int = 0,
    racks: Mapping[int, str | None] | None = None,
    start_index: int | None = None,
) -> dict[int, list[int]]:
    """Spread partitions and their replicas over brokers as Kafka's ZooKeeper-mode admin does
    (``AdminUtils.assignReplicasToBrokers``).

    The first replica of partition p is broker ``(start + p) mod n`` (a random start, or ``start_index``);
    followers are placed with a shift that grows every n partitions, so leaders and followers both spread
    evenly. When ``racks`` (broker id -> ``broker.rack``) names a rack for every broker, the brokers are
    first put in rack-alternated order (``rack_alternated_brokers``) and each follower goes to the next
    broker, in shifted order, whose rack holds no replica of the partition yet (any rack once every rack has
    one); with some brokers lacking a rack the plain assignment is used (Kafka's ``RackAwareMode.Safe``).
    Raises ``ValueError`` when the replication factor exceeds the number of brokers.
    """
    n = len(broker_ids)
    if replication_factor < 1:
        raise ValueError(f"replication factor must be at least 1, not {replication_factor}")
    if n == 0:
        raise ValueError("no live brokers to assign replicas to")
    if replication_factor > n:
        raise ValueError(f"replication factor {replication_factor} is larger than the {n} available brokers")
    rng = rng or random.Random()
    rack_of = {b: (racks or {}).get(b) for b in broker_ids}
    rack_aware = racks is not None and all(r is not None for r in rack_of.values())
    brokers = rack_alternated_brokers(rack_of) if rack_aware else sorted(broker_ids)
    start = rng.randrange(n) if start_index is None else start_index
    shift = rng.randrange(n) if start_index is None else start_index
    num_racks = len(set(rack_of.values()))
    out: dict[int, list[int]] = {}
    for i in range(num_partitions):
        p = start_partition + i
        if i > 0 and i % n == 0:
            shift += 1
        first = (i + start) % n
        replicas = [brokers[first]]
        if not rack_aware:
            for j in range(replication_factor - 1):
                replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        else:
            used_racks = {rack_of[brokers[first]]}
            k = 0
            while len(replicas) < replication_factor:
                b = brokers[(first + 1 + (shift * num_racks + k) % (n - 1)) % n]
                k += 1
                if (rack_of[b] not in used_racks or len(used_racks) == num_racks) and b not in replicas:
                    replicas.append(b)
                    used_racks.add(rack_of[b])
        out[p] = replicas
    return out


def rack_alternated_brokers(rack_of: Mapping[int, str | None]) -> list[int]:
    """Brokers ordered rack by rack in turn (racks sorted, brokers of a rack by id), e.g. racks
    {0: a, 1: c, 2: c, 3: b, 4: b, 5: a} -> [0, 3, 1, 5, 4, 2] (Kafka's ``getRackAlternatedBrokerList``)."""
    by_rack: dict[str | None, list[int]] = {}
    for b in sorted(rack_of):
        by_rack.setdefault(rack_of[b], []).append(b)
    queues = [by_rack[r] for r in sorted(by_rack, key=lambda r: (r is None, r or ""))]
    out: list[int] = []
    depth = 0
    while len(out) < len(rack_of):
        out.extend(q[depth] for q in queues if depth < len(q))
        depth += 1
    return out
