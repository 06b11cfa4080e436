"""The share group assignor "simple" (Kafka's ``SimpleAssignor`` semantics for share groups, KIP-932).

Unlike a consumer group's assignor, a topic-partition may be assigned to several members: records are
handed out one by one under acquisition locks, so sharing a partition is safe. The rules, as Kafka's
homogeneous and heterogeneous builders:

- Every member gets partitions when there are any: with ``M`` members and ``P`` assignable partitions each
  partition is wanted by ``ceil(M / P)`` members (its *sharing*; 1 while ``M <= P``) and the ``sharing * P``
  slots are spread over the members so that any two members' counts differ by at most one.
- Balance first, then stickiness: a member keeps what it has (of topics it still subscribes to) up to its
  quota and while the partition is not shared more than wanted; the rest is handed out partition by
  partition to the members with the most room left under their quota that do not hold it yet; when what
  was kept leaves a member short, a partition moves to it from a member over its quota.
- Homogeneous (every member subscribes to the same topics): the partitions of all topics are pooled.
  Heterogeneous: each topic is assigned over its own subscribers (topics in id order), the least loaded
  members first, so a member's count over all topics stays as even as the subscriptions allow.

Pure, deterministic (members and partitions are taken in sorted order); thread-safe.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

NAME = "simple"

Assignment = dict[uuid.UUID, frozenset[int]]
TopicPartition = tuple[uuid.UUID, int]


def assign(
    subscriptions: Mapping[str, frozenset[uuid.UUID]],
    partitions: Mapping[uuid.UUID, Sequence[int]],
    current: Mapping[str, Mapping[uuid.UUID, frozenset[int]]],
) -> dict[str, Assignment]:
    """The target assignment: member id -> topic id -> partitions.

    ``subscriptions``: member id -> the ids of the topics it subscribes to (topics unknown to ``partitions`` are
    ignored); ``partitions``: topic id -> its assignable partitions; ``current``: the previous target assignment
    (for stickiness). Every member of ``subscriptions`` is in the result (maybe with nothing)."""
    members = sorted(subscriptions)
    held: dict[str, set[TopicPartition]] = {m: set() for m in members}
    if not members:
        return {}
    topic_sets = {frozenset(t for t in subscriptions[m] if t in partitions) for m in members}
    if len(topic_sets) == 1:
        topics = next(iter(topic_sets))
        pool = [(t, p) for t in sorted(topics) for p in sorted(partitions[t])]
        _assign_pool(members, pool, current, held)
    else:
        for t in sorted(partitions):
            subscribers = [m for m in members if t in subscriptions[m]]
            if subscribers:
                # the least loaded first: their quota gets the larger share when the slots do not divide evenly
                subscribers.sort(key=lambda m: (len(held[m]), m))
                _assign_pool(subscribers, [(t, p) for p in sorted(partitions[t])], current, held)
    out: dict[str, Assignment] = {}
    for m in members:
        by_topic: dict[uuid.UUID, set[int]] = {}
        for t, p in held[m]:
            by_topic.setdefault(t, set()).add(p)
        out[m] = {t: frozenset(ps) for t, ps in by_topic.items()}
    return out


def _assign_pool(
    members: list[str],
    pool: list[TopicPartition],
    current: Mapping[str, Mapping[uuid.UUID, frozenset[int]]],
    held: dict[str, set[TopicPartition]],
) -> None:
    """Assign ``pool`` over ``members`` (in their order of preference), adding to ``held``."""
    if not pool:
        return
    n_members, n_parts = len(members), len(pool)
    sharing = -(-n_members // n_parts)
    slots = sharing * n_parts
    in_pool = set(pool)
    # the larger quotas go to the members holding the most already (stickiness), then in preference order
    kept = {m: sum(1 for t, ps in current.get(m, {}).items() for p in ps if (t, p) in in_pool) for m in members}
    by_kept = sorted(members, key=lambda m: -kept[m])  # stable: preference order among equals
    quota = {m: slots // n_members + (1 if i < slots % n_members else 0) for i, m in enumerate(by_kept)}
    holders: dict[TopicPartition, list[str]] = {tp: [] for tp in pool}
    taken: dict[str, set[TopicPartition]] = {m: set() for m in members}
    # 1. stickiness: keep what each member had, within its quota and the partition's sharing
    for m in members:
        previous = sorted((t, p) for t, ps in current.get(m, {}).items() for p in ps if (t, p) in in_pool)
        for tp in previous:
            if len(taken[m]) < quota[m] and len(holders[tp]) < sharing:
                taken[m].add(tp)
                holders[tp].append(m)
    # 2. hand out what is missing, to the members with the most room left under their quota that do not hold it
    #    yet (ties: preference order); most room first keeps every quota reachable
    rank = {m: i for i, m in enumerate(by_kept)}
    for tp in pool:
        while len(holders[tp]) < sharing:
            candidates = [m for m in members if tp not in taken[m]]
            if not candidates:
                break
            best = min(candidates, key=lambda m: (len(taken[m]) - quota[m], rank[m]))
            taken[best].add(tp)
            holders[tp].append(best)
    # 3. what the kept partitions made unreachable: move a partition from a member over its quota to one under it
    #    (the one over holds more, so it holds one the other does not)
    while True:
        under = [m for m in members if len(taken[m]) < quota[m]]
        over = [m for m in members if len(taken[m]) > quota[m]]
        if not under or not over:
            break
        u, o = under[0], over[0]
        tp = min(taken[o] - taken[u])
        taken[o].discard(tp)
        taken[u].add(tp)
    for m in members:
        held[m] |= taken[m]
