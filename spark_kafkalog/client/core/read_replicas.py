"""Preferred read replicas (KIP-392) on the client side, kept as Kafka's consumer keeps them.

A Fetch answer (v11+) whose partition carries ``preferred_read_replica`` >= 0 names the broker the client
should fetch that partition from (the leader chose it for the client's ``client.rack``). The client then
fetches the partition from that broker until one of (Kafka's ``SubscriptionState``/``AbstractFetch`` rules):

* ``metadata.max.age.ms`` has passed since the leader named it (then the leader is asked again);
* the broker is no longer in the client's metadata (then the leader is used at once);
* a fetch from it fails: any partition error (NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH,
  ...) or a lost connection. An OFFSET_OUT_OF_RANGE from a read replica is not an out-of-range position: the
  follower may only be behind, so the fetch goes back to the leader, which answers for the log.

Concurrency: not thread-safe; ``KafkaClient`` calls it under its lock. The clock is injectable for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from spark_kafkalog.client.types import TopicPartition

__all__ = ["PreferredReadReplicas"]


class PreferredReadReplicas:
    """``TopicPartition`` -> (broker id, expiry on ``clock``, in seconds) of the partitions read from a replica."""

    def __init__(self, max_age_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_age_s = max_age_ms / 1000.0
        self.clock = clock
        self._replicas: dict[TopicPartition, tuple[int, float]] = {}

    def node_for(self, tp: TopicPartition, leader: int, is_known: Callable[[int], bool]) -> int:
        """The broker to fetch ``tp`` from: its read replica while valid and known to the metadata, else
        ``leader`` (an expired or unknown replica is forgotten)."""
        entry = self._replicas.get(tp)
        if entry is None:
            return leader
        node, expires = entry
        if self.clock() >= expires or not is_known(node):
            del self._replicas[tp]
            return leader
        return node

    def update(self, tp: TopicPartition, node: int) -> None:
        """The leader named ``node`` as ``tp``'s read replica: valid for ``metadata.max.age.ms`` from now."""
        self._replicas[tp] = (node, self.clock() + self.max_age_s)

    def clear(self, tp: TopicPartition) -> int | None:
        """Forget ``tp``'s read replica (a fetch from it failed); returns the broker forgotten, if any."""
        entry = self._replicas.pop(tp, None)
        return None if entry is None else entry[0]

    def get(self, tp: TopicPartition) -> int | None:
        """The read replica of ``tp`` as recorded (expiry not checked), for tests and diagnostics."""
        entry = self._replicas.get(tp)
        return None if entry is None else entry[0]
