"""Partition reassignment rules of the controller (KIP-455 in Kafka's ZooKeeper-era controller), as pure
functions over broker id lists.

A reassignment of a partition from its original replicas ORS to target replicas TRS:

* start: the assignment becomes RS = TRS + ORS (distinct, target first), adding AR = TRS - ORS, removing
  RR = ORS - TRS (``reassign_to``); the brokers of AR start following the leader;
* complete, once every target replica is in the ISR (``is_complete``): leadership moves to a live in-sync
  target replica if the leader is not one of them (``leader_for``), the assignment becomes TRS, and the ISR
  shrinks to its members in TRS (``isr_within``); the brokers of RR delete their replicas;
* a new target while one is in progress reassigns from the same ORS (replicas still being added that the new
  target leaves out are dropped); cancelling (``revert``) is a reassignment back to ORS.

``ReplicaAssignment.origin`` is ORS (the replicas minus those being added), ``target`` TRS (minus those being
removed). Nothing here does I/O; the controller applies the results with compare-and-set writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = ["ReplicaAssignment", "reassign_to", "revert", "invalid_target", "is_complete", "leader_for", "isr_within"]


@dataclass(frozen=True)
class ReplicaAssignment:
    """One partition's replicas with the replicas being added and removed (both empty: no reassignment)."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def origin(self) -> tuple[int, ...]:
        """The replicas before the reassignment (ORS)."""
        return tuple(r for r in self.replicas if r not in self.adding)

    @property
    def target(self) -> tuple[int, ...]:
        """The replicas after the reassignment (TRS)."""
        return tuple(r for r in self.replicas if r not in self.removing)


def reassign_to(current: ReplicaAssignment, target: Sequence[int]) -> ReplicaAssignment:
    """The assignment while moving from ``current``'s original replicas to ``target`` (Kafka's
    ``ReplicaAssignment.reassignTo``); a target equal to the original set in another order only reorders."""
    origin = current.origin
    target = tuple(target)
    replicas = tuple(dict.fromkeys(target + origin))
    return ReplicaAssignment(
        replicas,
        tuple(r for r in replicas if r not in origin),
        tuple(r for r in replicas if r not in target),
    )


def revert(current: ReplicaAssignment) -> ReplicaAssignment | None:
    """Cancelling: a reassignment back to the original replicas; None when none is in progress."""
    if not current.is_reassigning:
        return None
    return reassign_to(current, current.origin)


def invalid_target(target: Sequence[int], live: Collection[int]) -> str | None:
    """Why ``target`` cannot be a partition's replica list (INVALID_REPLICA_ASSIGNMENT), or None."""
    if not target:
        return "empty replica list"
    if any(r < 0 for r in target):
        return f"negative broker id in {list(target)}"
    if len(set(target)) != len(target):
        return f"duplicate broker ids in {list(target)}"
    dead = sorted(set(target) - set(live))
    if dead:
        return f"brokers {dead} are not live (replicas {list(target)})"
    return None


def is_complete(assignment: ReplicaAssignment, isr: Collection[int]) -> bool:
    """Every target replica is in the ISR (Kafka's ``isReassignmentComplete``)."""
    return all(r in isr for r in assignment.target)


def leader_for(replicas: Sequence[int], leader: int, isr: Sequence[int], live: Collection[int]) -> int:
    """The leader once the replicas are ``replicas``: the current one if it is among them and alive, else the
    first of them that is alive and in the ISR (Kafka's ``ReassignedPartitionLeaderSelector``); -1: none."""
    if leader in replicas and leader in live:
        return leader
    for r in replicas:
        if r in live and r in isr:
            return r
    return -1


def isr_within(isr: Sequence[int], replicas: Collection[int]) -> tuple[int, ...]:
    """The ISR members that are still replicas, in ISR order."""
    return tuple(r for r in isr if r in replicas)
