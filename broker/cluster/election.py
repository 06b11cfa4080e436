"""Leader election rules of the controller, as pure functions over replica lists (Kafka's ZooKeeper-era
``PartitionLeaderElectionAlgorithms``).

Inputs are broker ids: ``replicas`` in assignment order (the first is the preferred leader), ``isr`` as stored
in the partition state, ``live`` the registered brokers. Outputs are ``Election(leader, isr, unclean)`` or
None when nothing is to be changed. Nothing here does I/O; the controller applies the results with
compare-and-set writes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Election",
    "offline_election",
    "dead_followers_removed",
    "shutdown_election",
    "preferred_election",
    "imbalanced_brokers",
    "back_in_sync",
]


@dataclass(frozen=True)
class Election:
    """A new leader (-1: offline) and the ISR to store with it; ``unclean``: the leader was not in the ISR."""

    leader: int
    isr: tuple[int, ...]
    unclean: bool = False


def offline_election(
    replicas: Sequence[int], isr: Sequence[int], live: Collection[int], *, unclean: bool = False
) -> Election:
    """Kafka's offline-partition election: the first live replica (assignment order) that is in the ISR.

    The ISR shrinks to its live members. With no live ISR member the partition goes offline (leader -1)
    keeping the last ISR, so the in-sync replica that returns first is elected; with ``unclean`` a live
    replica outside the ISR is elected instead and becomes the whole ISR (records it lacks are lost).
    """
    for r in replicas:
        if r in live and r in isr:
            return Election(r, tuple(b for b in isr if b in live))
    if unclean:
        for r in replicas:
            if r in live:
                return Election(r, (r,), unclean=True)
    return Election(-1, tuple(isr))


def dead_followers_removed(leader: int, isr: Sequence[int], live: Collection[int]) -> Election | None:
    """Kafka's removal of a failed broker's replicas from the ISRs it followed in (``OfflineReplica``):
    the live leader keeps leading with the ISR shrunk to its live members, so acks=all stops waiting for
    the dead broker at once instead of after ``replica.lag.time.max.ms``. None when the leader is not live
    or every ISR member is."""
    if leader not in live or all(r in live for r in isr):
        return None
    return Election(leader, tuple(r for r in isr if r in live))


def shutdown_election(
    replicas: Sequence[int], isr: Sequence[int], live: Collection[int], shutting_down: Collection[int]
) -> Election | None:
    """Kafka's controlled-shutdown election: the first live ISR replica that is not shutting down.

    The ISR loses the brokers shutting down. None when no such replica exists (the leader stays where it
    is until its broker leaves; with replication factor 1 there is nowhere to move).
    """
    for r in replicas:
        if r in live and r in isr and r not in shutting_down:
            return Election(r, tuple(b for b in isr if b not in shutting_down))
    return None


def preferred_election(
    replicas: Sequence[int], leader: int, isr: Sequence[int], live: Collection[int]
) -> Election | None:
    """Kafka's preferred-replica election: the first assigned replica, when alive, in the ISR and not leading."""
    preferred = replicas[0]
    if leader == preferred or preferred not in live or preferred not in isr:
        return None
    return Election(preferred, tuple(isr))


def imbalanced_brokers(partitions: Iterable[tuple[Sequence[int], int]], percentage: float) -> dict[int, list[int]]:
    """Brokers whose leader imbalance exceeds ``percentage`` (``leader.imbalance.per.broker.percentage``).

    ``partitions`` yields ``(replicas, leader)``; the result maps each such preferred broker to the indexes
    (in input order) of the partitions it should lead but does not. Imbalance of a broker = partitions it is
    preferred for and does not lead / partitions it is preferred for, in percent (Kafka's
    ``checkAndTriggerAutoLeaderRebalance``).
    """
    preferred: dict[int, int] = {}
    not_leading: dict[int, list[int]] = {}
    for i, (replicas, leader) in enumerate(partitions):
        b = replicas[0]
        preferred[b] = preferred.get(b, 0) + 1
        if leader != b:
            not_leading.setdefault(b, []).append(i)
    return {b: idx for b, idx in sorted(not_leading.items()) if 100.0 * len(idx) / preferred[b] > percentage}


def back_in_sync(brokers: Collection[int], partitions: Iterable[tuple[Sequence[int], Sequence[int]]]) -> set[int]:
    """The ``brokers`` that are in the ISR of every partition they are the preferred replica of.

    ``partitions`` yields ``(replicas, isr)``. A broker preferred for no partition is trivially in sync. The
    controller runs the imbalance check at once for such a broker after it (re)registered
    (``broker.cluster.returning_brokers``).
    """
    behind: set[int] = set()
    for replicas, isr in partitions:
        if replicas and replicas[0] in brokers and replicas[0] not in isr:
            behind.add(replicas[0])
    return set(brokers) - behind


def unclean_enabled(topic_config: Mapping[str, str], broker_default: bool) -> bool:
    """``unclean.leader.election.enable`` of a topic: its override, else the broker's value."""
    raw = topic_config.get("unclean.leader.election.enable")
    if raw is None:
        return broker_default
    return raw.strip().lower() == "true"
