"""Random runs of joins, leaves, heartbeats, subscription and topic changes: no partition is ever owned by
two clients, the group converges to a balanced stable assignment, and its records rebuild it."""

from __future__ import annotations

import random

import pytest

from broker.coordinator.consumer.group import ConsumerGroupState

from .fakes import FakeTopics, hb, make_group
from .sim import Cluster
from .test_group_replay import persisted, replayed


@pytest.mark.parametrize("assignor", ["uniform", "range"])
@pytest.mark.parametrize("seed", range(8))
def test_random_membership_changes_keep_partitions_exclusive_and_converge(seed, assignor):
    rng = random.Random(seed)
    topics = FakeTopics({"a": rng.randint(1, 8), "b": rng.randint(1, 8)})
    cluster = Cluster(make_group(default_assignor=assignor), topics)
    names = [f"m{i}" for i in range(6)]
    static_count = [0]
    for _ in range(60):
        action = rng.random()
        idle = [n for n in names if n not in cluster.clients]
        if action < 0.2 and idle:
            cluster.join(rng.choice(idle), rng.choice([["a"], ["b"], ["a", "b"]]))
        elif action < 0.3 and cluster.clients:
            cluster.leave(rng.choice(sorted(cluster.clients)))
        elif action < 0.35:
            name = rng.choice(["a", "b"])
            topics.grow(name, topics.partition_count(topics.id(name)) + 1)
        elif action < 0.4 and cluster.clients:
            name = rng.choice(sorted(cluster.clients))
            client = cluster.clients[name]
            client.topics = rng.choice([["a"], ["b"], ["a", "b"]])
            out = cluster.group.heartbeat(
                hb(name, client.epoch, topics=client.topics, owned=client.owned), topics, cluster.now
            )
            cluster.log.extend(out.records)
            client.epoch = out.member_epoch
            if out.assignment is not None:
                client.owned = dict(out.assignment)
            cluster.check_exclusive()
        elif action < 0.45:
            # a static instance (re)starts with a new member id; allowed once its previous member left with -2
            instance = rng.choice(["i1", "i2"])
            holder = cluster.group.static_members.get(instance)
            if holder is None or cluster.group.members[holder].member_epoch == -2:
                static_count[0] += 1
                cluster.join(f"s{static_count[0]}", ["a", "b"], instance_id=instance)
        elif action < 0.5:
            statics = sorted(n for n, c in cluster.clients.items() if c.instance_id)
            if statics:
                cluster.leave(rng.choice(statics), epoch=-2)
        elif action < 0.53:
            # time passes: everybody but one heartbeats, then sessions are checked
            cluster.now += 30_000
            silent = rng.choice(sorted(cluster.clients)) if cluster.clients else None
            for name in sorted(cluster.clients):
                if name != silent:
                    cluster.beat(name)
            cluster.now += 20_000
            for name in sorted(cluster.clients):
                if name != silent:
                    cluster.beat(name)
            cluster.log.extend(cluster.group.expire(cluster.now))
            for name in [n for n in cluster.clients if n not in cluster.group.members]:
                cluster.clients.pop(name)
        elif cluster.clients:
            cluster.beat(rng.choice(sorted(cluster.clients)))
    # Static members away (-2) keep their partitions until their session expires: let it expire.
    for _ in range(2):
        cluster.now += 30_000
        for name in sorted(cluster.clients):
            cluster.beat(name)
    cluster.log.extend(cluster.group.expire(cluster.now))
    assert all(m.member_epoch != -2 for m in cluster.group.members.values())
    if cluster.clients:
        cluster.settle(rounds=12)
        assert cluster.group.state is ConsumerGroupState.STABLE
        for name, client in cluster.clients.items():
            assert client.owned == dict(cluster.group.target_assignment[name])
        owned_total = sum(cluster.owned_counts().values())
        subscribed = {t for c in cluster.clients.values() for t in c.topics}
        assert owned_total == sum(topics.partition_count(topics.id(t)) for t in subscribed)
    assert persisted(replayed(cluster.log).snapshot()) == persisted(cluster.group.snapshot())
