"""A simulated KIP-848 client for group-model tests: it owns what the coordinator last assigned it, heartbeats
with its epoch and owned partitions, and ``Cluster`` checks after every step that no partition is owned by two
clients (the protocol's safety property)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from broker.coordinator.consumer import records as r
from broker.coordinator.consumer.group import ConsumerGroup, HeartbeatOutcome
from broker.coordinator.consumer.member import MemberState

from .fakes import FakeTopics, hb


@dataclass
class SimClient:
    member_id: str
    topics: list[str]
    instance_id: str | None = None
    epoch: int = 0
    owned: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)


class Cluster:
    def __init__(self, group: ConsumerGroup, topics: FakeTopics) -> None:
        self.group = group
        self.topics = topics
        self.clients: dict[str, SimClient] = {}
        self.now = 0
        self.log: list[r.CoordinatorRecord] = []

    def _apply(self, client: SimClient, out: HeartbeatOutcome) -> None:
        self.log.extend(out.records)
        client.epoch = out.member_epoch
        if out.assignment is not None:
            client.owned = dict(out.assignment)
        self.check_exclusive()

    def join(
        self, name: str, topics: list[str] | None, *, instance_id: str | None = None, regex: str | None = None
    ) -> SimClient:
        client = SimClient(name, topics or [], instance_id)
        req = hb(name, 0, topics=topics, regex=regex, instance_id=instance_id)
        out = self.group.heartbeat(req, self.topics, self.now)
        self.clients[name] = client
        self._apply(client, out)
        return client

    def beat(self, name: str) -> HeartbeatOutcome:
        client = self.clients[name]
        out = self.group.heartbeat(
            hb(name, client.epoch, owned=client.owned, instance_id=client.instance_id), self.topics, self.now
        )
        self._apply(client, out)
        return out

    def leave(self, name: str, epoch: int = -1) -> HeartbeatOutcome:
        client = self.clients.pop(name)
        out = self.group.heartbeat(hb(name, epoch, instance_id=client.instance_id), self.topics, self.now)
        self.log.extend(out.records)
        return out

    def settle(self, rounds: int = 10) -> int:
        """Heartbeat every client (in name order) until the group is stable; the rounds it took."""
        for i in range(rounds):
            for name in sorted(self.clients):
                self.beat(name)
            # Stable for every client (a static member away with epoch -2 keeps the group Reconciling, as Kafka).
            g = self.group
            if g.group_epoch == g.assignment_epoch and all(
                c.epoch == g.assignment_epoch and g.members[n].state is MemberState.STABLE
                for n, c in self.clients.items()
            ):
                return i + 1
        raise AssertionError(f"not stable after {rounds} rounds: {self.group.state}")

    def check_exclusive(self) -> None:
        seen: dict[tuple[uuid.UUID, int], str] = {}
        for c in self.clients.values():
            for t, parts in c.owned.items():
                for p in parts:
                    assert (t, p) not in seen, f"partition {t}-{p} owned by {seen[(t, p)]} and {c.member_id}"
                    seen[(t, p)] = c.member_id

    def owned_counts(self) -> dict[str, int]:
        return {n: sum(len(p) for p in c.owned.values()) for n, c in self.clients.items()}
