"""Partition reassignment by the controller on the real ZooKeeper registry (a chroot per test): the
assignment node carries Kafka's ``adding_replicas`` / ``removing_replicas`` while it runs."""

from __future__ import annotations

import json

from tests.broker.cluster.test_controller_cluster import run
from tests.broker.cluster.test_controller_reassignment import reassign_0_1_to_1_2
from tests.waiting import wait_until_async


def test_reassignment_from_0_1_to_1_2_on_zookeeper(make_registry):
    run([0, 1, 2], reassign_0_1_to_1_2, make_registry)


def test_the_assignment_node_holds_adding_and_removing_replicas_while_reassigning(make_registry, zk_connect):
    from kazoo.client import KazooClient

    from broker.cluster.registry import TopicAssignment

    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (0, 1)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        await c.controller.alter_reassignments({("t", 0): (1, 2)})
        zk = KazooClient(hosts=zk_connect)
        zk.start(10)
        try:
            node = json.loads(zk.get("/brokers/topics/t")[0])
        finally:
            zk.stop()
            zk.close()
        assert node["partitions"] == {"0": [1, 2, 0]}
        assert (node["adding_replicas"], node["removing_replicas"]) == ({"0": [2]}, {"0": [0]})

    run([0, 1, 2], test, make_registry)
