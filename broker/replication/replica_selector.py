"""Preferred read replicas (KIP-392): which replica a consumer should fetch a partition from.

``replica.selector.class`` names the selector the *leader* asks on every consumer Fetch v11+:

    (unset, the default), ``leader``                                  LeaderSelector: always the leader,
                                                                      so no preferred replica is answered
    ``org.apache.kafka.common.replica.RackAwareReplicaSelector``,     RackAwareReplicaSelector
    ``rack-aware`` (kafkalog's alias)

The rack-aware rule is Kafka's: with a ``rack_id`` from the client, the replicas whose broker is in that rack
are candidates; the leader when it is one of them, else the most caught-up candidate (``ReplicaView.rank``:
highest log end offset, then shortest time since it was last caught up, then highest broker id, as Kafka's
``ReplicaView.comparator``); no candidate, or no rack id, gives the leader.

The views the selector sees are built by the caller (``broker.replication.follower_fetch``) as Kafka's
``ReplicaManager.findPreferredReadReplica`` builds them: the leader, plus every follower that is in the ISR,
registered (live) and holds the fetch offset. Pure and immutable; thread-safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from broker.config_keys.replication import RACK_AWARE_CLASS, REPLICA_SELECTORS

RACK_AWARE_ALIAS = "rack-aware"
LEADER_ALIAS = "leader"
SELECTOR_NAMES = REPLICA_SELECTORS
"""The values ``replica.selector.class`` accepts (besides leaving it unset), declared with the config key."""


@dataclass(frozen=True)
class ReplicaView:
    """One replica as the selector sees it (Kafka's ``ReplicaView``)."""

    broker_id: int
    rack: str | None
    log_end_offset: int
    time_since_last_caught_up_ms: int

    def rank(self) -> tuple[int, int, int]:
        """Larger is more caught up (Kafka's ``ReplicaView.comparator``, used with ``max``)."""
        return (self.log_end_offset, -self.time_since_last_caught_up_ms, self.broker_id)


@dataclass(frozen=True)
class PartitionView:
    """The candidate replicas of one partition, the leader among them (Kafka's ``PartitionView``)."""

    replicas: Sequence[ReplicaView]
    leader: ReplicaView


class ReplicaSelector(Protocol):
    def select(self, rack_id: str, partition: PartitionView) -> ReplicaView:
        """The replica a client in ``rack_id`` ("" = none given) should read from."""
        ...


class LeaderSelector:
    """Always the leader: consumers read from the leader (Kafka's behaviour without a selector)."""

    def select(self, rack_id: str, partition: PartitionView) -> ReplicaView:
        return partition.leader


class RackAwareReplicaSelector:
    """A replica in the client's rack: the leader if it is there, else the most caught-up one there; the
    leader when the client names no rack or no candidate is in it."""

    def select(self, rack_id: str, partition: PartitionView) -> ReplicaView:
        if not rack_id:
            return partition.leader
        same_rack = [r for r in partition.replicas if r.rack == rack_id]
        if not same_rack or partition.leader in same_rack:
            return partition.leader
        return max(same_rack, key=ReplicaView.rank)


def selector_for(name: str | None) -> ReplicaSelector | None:
    """The selector ``replica.selector.class`` names; None when unset (no preferred replica is ever answered).
    Raises ``ValueError`` naming the accepted values for any other name."""
    if name is None or name == "":
        return None
    if name == LEADER_ALIAS:
        return LeaderSelector()
    if name in (RACK_AWARE_CLASS, RACK_AWARE_ALIAS):
        return RackAwareReplicaSelector()
    raise ValueError(
        f"replica.selector.class={name!r}: not a known selector; use {RACK_AWARE_CLASS} (or {RACK_AWARE_ALIAS}), "
        f"{LEADER_ALIAS}, or leave it unset"
    )
