"""The controller's partition reassignments (AlterPartitionReassignments / ListPartitionReassignments, KIP-455).

The registry holds every ongoing reassignment: the topic's assignment node lists the partition's replicas
(target first, then the original ones) with ``adding_replicas`` / ``removing_replicas``, as Kafka's
ZooKeeper-mode controller writes ``/brokers/topics/<t>``. The rules are in ``broker.cluster.reassignment``;
this module applies them:

* ``alter`` validates each partition's target, writes the new assignment (compare-and-set on the topic's
  assignment node, one write per topic); the replica managers of added brokers see the assignment and start
  following. A partition whose target is already in sync completes at once;
* while a topic has reassigning partitions, its partition states are watched; when every target replica of a
  partition is in the ISR the reassignment completes: leadership moves to a live in-sync target replica with a
  new leader epoch if the leader is not a target replica, then the assignment becomes the target (removed
  brokers drop and delete their replicas), then the ISR shrinks to the target replicas;
* whenever brokers leave a partition's replica list, the controller writes the partition state once more
  afterwards (compare-and-set, leader epoch kept unless the leader changes): a leader that re-added a removed
  follower to the ISR before it saw the new assignment fails its next ISR write, and this write takes the
  removed broker out of the ISR. A leader that knows the new assignment never adds a non-replica again;
* a new controller resumes the ongoing reassignments it finds in the registry.

Concurrency: the methods run on the controller's task only (``Controller`` queues requests and watch
deliveries onto it); registry calls go through the controller's ``run_blocking``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from spark_kafkalog.protocol import ErrorCode

from . import reassignment as ra
from .registry import PartitionState, StaleStateError, TopicAssignment

log = logging.getLogger("kafkalog.controller")

_ATTEMPTS = 10

PartitionResult = tuple[int, "str | None"]
"""(error code, error message) of one partition of an AlterPartitionReassignments request."""


def replica_assignment(topic: TopicAssignment, partition: int) -> ra.ReplicaAssignment:
    """The partition's replicas with its adding and removing replicas."""
    return ra.ReplicaAssignment(
        topic.partitions[partition],
        topic.adding_replicas.get(partition, ()),
        topic.removing_replicas.get(partition, ()),
    )


class Reassignments:
    """Partition reassignment on behalf of ``controller``, a ``broker.cluster.controller.Controller`` (see the
    module docstring; not imported here: the controller imports this module)."""

    def __init__(self, controller: Any) -> None:
        self.c = controller
        self._subs: dict[str, Any] = {}

    # -- watches ----------------------------------------------------------------------------------
    def sync_watches(self) -> None:
        """Watch the partition states of exactly the topics with reassigning partitions."""
        wanted = {n for n, t in self.c.topics.items() if t.reassigning_partitions() and n not in self.c.deletions}
        for name in [n for n in self._subs if n not in wanted]:
            self._subs.pop(name).cancel()
        for name in sorted(wanted - set(self._subs)):
            self._subs[name] = self.c.registry.on_partition_states_changed(name, self.c.post_states(name))

    def stop(self) -> None:
        for sub in self._subs.values():
            sub.cancel()
        self._subs = {}

    async def states_changed(self, topic: str, states: Mapping[int, PartitionState]) -> None:
        """A watched topic's partition states: complete the reassignments whose targets are all in sync."""
        assignment = self.c.topics.get(topic)
        if assignment is None or topic not in self._subs:
            return
        for p in assignment.reassigning_partitions():
            state = states.get(p)
            if state is not None and ra.is_complete(replica_assignment(assignment, p), state.isr):
                await self._complete(topic, p)
        self.sync_watches()

    # -- requests ---------------------------------------------------------------------------------
    def list(self, wanted: Mapping[str, Sequence[int]] | None) -> list[tuple[str, int, ra.ReplicaAssignment]]:
        """Ongoing reassignments (of the ``{topic: partitions}`` asked for; all when None), by topic, partition."""
        out = []
        for name, topic in sorted(self.c.topics.items()):
            if wanted is not None and name not in wanted:
                continue
            for p in topic.reassigning_partitions():
                if wanted is None or p in wanted[name]:
                    out.append((name, p, replica_assignment(topic, p)))
        return out

    async def alter(
        self, requests: Mapping[tuple[str, int], Sequence[int] | None]
    ) -> dict[tuple[str, int], PartitionResult]:
        """Start (a target list) or cancel (None) the reassignment of each partition; a result per partition."""
        results: dict[tuple[str, int], PartitionResult] = {}
        by_topic: dict[str, dict[int, tuple[int, ...] | None]] = {}
        for (name, p), target in requests.items():
            by_topic.setdefault(name, {})[p] = None if target is None else tuple(target)
        for name, parts in by_topic.items():
            results.update(await self._alter_topic(name, parts))
        self.sync_watches()
        return results

    async def _alter_topic(
        self, name: str, parts: dict[int, tuple[int, ...] | None]
    ) -> dict[tuple[str, int], PartitionResult]:
        c, reg = self.c, self.c.registry
        unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r} does not exist")
        for _ in range(_ATTEMPTS):
            results: dict[tuple[str, int], PartitionResult] = {}
            current = await c.run_blocking(reg.topic, name)
            if current is None or name in c.deletions:
                return {(name, p): unknown for p in parts}
            new_topic, changed = current, {}
            for p, target in sorted(parts.items()):
                planned = self._plan(current, p, target)
                if isinstance(planned, tuple):
                    results[(name, p)] = planned
                    continue
                old = replica_assignment(current, p)
                if planned == old:
                    results[(name, p)] = (ErrorCode.NONE, None)
                    continue
                error = await self._hand_over(name, p, planned.replicas)
                if error is not None:
                    results[(name, p)] = (ErrorCode.INVALID_REPLICA_ASSIGNMENT, error)
                    continue
                new_topic = new_topic.with_partition(p, planned.replicas, planned.adding, planned.removing)
                changed[p] = (old, planned)
            if changed:
                try:
                    await c.run_blocking(reg.replace_assignment, current, new_topic)
                except StaleStateError:
                    continue  # the topic changed meanwhile (new partitions): plan again from the new node
                c.topics[name] = new_topic
            for p, (old, planned) in changed.items():
                results[(name, p)] = (ErrorCode.NONE, None)
                log.info(
                    "%s-%d: reassignment %s: replicas %s -> %s (adding %s, removing %s)",
                    name,
                    p,
                    "started" if planned.is_reassigning else "applied",
                    list(old.replicas),
                    list(planned.replicas),
                    list(planned.adding),
                    list(planned.removing),
                )
                if set(old.replicas) - set(planned.replicas):
                    await self._fence(name, p, planned.replicas)
                if planned.is_reassigning:
                    await self._complete(name, p)
            return results
        return {(name, p): (ErrorCode.UNKNOWN_SERVER_ERROR, "the assignment kept changing") for p in parts}

    def _plan(
        self, topic: TopicAssignment, p: int, target: tuple[int, ...] | None
    ) -> ra.ReplicaAssignment | PartitionResult:
        """The partition's next assignment, or the (error code, message) that refuses the request."""
        if p not in topic.partitions:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic.name!r} has no partition {p}"
        current = replica_assignment(topic, p)
        if target is None:
            reverted = ra.revert(current)
            if reverted is None:
                return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, f"no reassignment of {topic.name}-{p} is in progress"
            return reverted
        why = ra.invalid_target(target, self.c.live)
        if why is not None:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{topic.name}-{p}: {why}"
        return ra.reassign_to(current, target)

    # -- steps ------------------------------------------------------------------------------------
    async def _hand_over(self, name: str, p: int, replicas: tuple[int, ...]) -> str | None:
        """Before ``replicas`` become the partition's replica list: when its leader is not among them, elect a
        live in-sync one of them with a new leader epoch. Returns why that is impossible, or None."""
        c, reg = self.c, self.c.registry
        for _ in range(_ATTEMPTS):
            state = await c.run_blocking(reg.partition_state, name, p)
            if state is None or state.leader in replicas or state.leader < 0:
                return None
            leader = ra.leader_for(replicas, state.leader, state.isr, c.live_not_stopping())
            if leader < 0:
                return f"no live in-sync replica among {list(replicas)} can lead {name}-{p} (isr {list(state.isr)})"
            new = PartitionState(
                leader, state.leader_epoch + 1, ra.isr_within(state.isr, replicas), c.epoch, state.zk_version
            )
            try:
                await c.run_blocking(reg.update_partition_state, name, p, new)
            except StaleStateError:
                continue
            log.info(
                "%s-%d: leader %d -> %d for the reassignment (epoch %d)",
                name,
                p,
                state.leader,
                leader,
                new.leader_epoch,
            )
            return None
        return f"the state of {name}-{p} kept changing"

    async def _fence(self, name: str, p: int, replicas: tuple[int, ...]) -> None:
        """After brokers left the replica list: write the state once more with the ISR within ``replicas``."""
        c, reg = self.c, self.c.registry
        for _ in range(_ATTEMPTS):
            state = await c.run_blocking(reg.partition_state, name, p)
            if state is None:
                return
            leader = state.leader
            if leader >= 0 and leader not in replicas:
                leader = ra.leader_for(replicas, leader, state.isr, c.live_not_stopping())
            isr = ra.isr_within(state.isr, replicas) or ((leader,) if leader >= 0 else tuple(state.isr))
            epoch = state.leader_epoch + (leader != state.leader)
            try:
                await c.run_blocking(
                    reg.update_partition_state, name, p, PartitionState(leader, epoch, isr, c.epoch, state.zk_version)
                )
            except StaleStateError:
                continue
            if isr != tuple(state.isr) or leader != state.leader:
                log.info(
                    "%s-%d: leader %d, isr %s -> %s (epoch %d)", name, p, leader, list(state.isr), list(isr), epoch
                )
            return
        log.warning("%s-%d: could not write the state after the reassignment (kept changing)", name, p)

    async def _complete(self, name: str, p: int) -> None:
        """Finish the partition's reassignment if every target replica is in the ISR (else nothing)."""
        c, reg = self.c, self.c.registry
        for _ in range(_ATTEMPTS):
            current = await c.run_blocking(reg.topic, name)
            if current is None or p not in current.partitions:
                return
            assignment = replica_assignment(current, p)
            state = await c.run_blocking(reg.partition_state, name, p)
            if not assignment.is_reassigning or state is None or not ra.is_complete(assignment, state.isr):
                return
            target = assignment.target
            if await self._hand_over(name, p, target) is not None:
                log.info("%s-%d: reassignment waits: no live in-sync target replica can lead", name, p)
                return
            done = current.with_partition(p, target)
            try:
                await c.run_blocking(reg.replace_assignment, current, done)
            except StaleStateError:
                continue
            c.topics[name] = done
            await self._fence(name, p, target)
            log.info("%s-%d: reassignment complete: replicas %s", name, p, list(target))
            return
