"""The controller's early preferred-replica election: a broker that (re)registered leads its preferred
partitions again as soon as it is back in sync, not at the next ``leader.imbalance.check.interval.seconds``.

Kafka's controller checks the leader imbalance on a timer only (every 300 s by default, and 5 s after a
controller takes over), so after a restart the restarted broker leads nothing for up to five minutes. Here,
with ``auto.leader.rebalance.enable``, the controller also remembers each broker that registers (and every live
broker when it becomes the controller) and watches the partition states of the topics with a partition that
prefers (lists first) a remembered broker. Once a remembered broker is in the ISR of every partition it is
preferred for (``election.back_in_sync``), it is forgotten and the controller's usual imbalance check runs at
once (the same ``leader.imbalance.per.broker.percentage`` rule as the timer). A broker that leaves is
forgotten; one that never catches up (its leader is offline, say) waits for the timer. Partitions being
reassigned and topics being deleted are left out, as in the timer's check.

Concurrency: runs on the controller's task only (the controller queues the watch deliveries onto it); the
watches are registry subscriptions, cancelled by ``stop`` and whenever no remembered broker needs them.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from . import election
from .registry import PartitionState

log = logging.getLogger("kafkalog.controller")


class ReturningBrokers:
    """Early rebalance checks on behalf of ``controller``, a ``broker.cluster.controller.Controller`` (not
    imported here: the controller imports this module). ``waiting``: the remembered brokers."""

    def __init__(self, controller: Any) -> None:
        self.c = controller
        self.waiting: set[int] = set()
        self._subs: dict[str, Any] = {}
        self._states: dict[str, Mapping[int, PartitionState]] = {}

    async def registered(self, brokers: Collection[int]) -> None:
        """Remember ``brokers`` (they just registered, or this controller just took over)."""
        self.waiting |= set(brokers)
        self.sync_watches()
        await self.check()

    def live_changed(self, live: Collection[int]) -> None:
        """Forget the remembered brokers that left."""
        self.waiting &= set(live)
        self.sync_watches()

    def sync_watches(self) -> None:
        """Watch the partition states of exactly the topics with a partition preferring a remembered broker."""
        wanted = {name for name in self.c.topics if name not in self.c.deletions and self._preferred_rows(name)}
        for name in [n for n in self._subs if n not in wanted]:
            self._subs.pop(name).cancel()
            self._states.pop(name, None)
        for name in sorted(wanted - set(self._subs)):
            self._subs[name] = self.c.registry.on_partition_states_changed(
                name, self.c.post_states(name, "preferred_states")
            )

    async def states_changed(self, topic: str, states: Mapping[int, PartitionState]) -> None:
        """A watched topic's partition states."""
        if topic not in self._subs:
            return
        self._states[topic] = states
        await self.check()

    async def check(self) -> None:
        """Run the imbalance check when a remembered broker is back in sync (see the module docstring)."""
        if not self.waiting or any(name not in self._states for name in self._subs):
            return  # a watch has not delivered its first states yet
        rows = []
        for name in self._subs:
            states = self._states[name]
            for p, replicas in self._preferred_rows(name):
                state = states.get(p)
                if state is not None:
                    rows.append((replicas, state.isr))
        back = election.back_in_sync(self.waiting, rows)
        if not back:
            return
        self.waiting -= back
        self.sync_watches()
        log.info("brokers %s are in sync: checking the leader imbalance now", sorted(back))
        await self.c.check_leader_imbalance()

    def stop(self) -> None:
        for sub in self._subs.values():
            sub.cancel()
        self._subs = {}
        self._states = {}
        self.waiting = set()

    def _preferred_rows(self, topic: str) -> list[tuple[int, tuple[int, ...]]]:
        """``(partition, replicas)`` of ``topic``'s partitions that prefer a remembered broker and are not
        being reassigned."""
        assignment = self.c.topics.get(topic)
        if assignment is None:
            return []
        return [
            (p, replicas)
            for p, replicas in sorted(assignment.partitions.items())
            if replicas and replicas[0] in self.waiting and not assignment.is_reassigning(p)
        ]
