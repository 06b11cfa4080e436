"""The controller's elections on the real ZooKeeper registry (a chroot per test): the same scenarios as
``tests/broker/cluster/test_controller_cluster.py`` with each broker a ``ZooKeeperRegistry`` session."""

from __future__ import annotations

from broker.cluster.registry import TopicAssignment
from tests.broker.cluster.test_controller_cluster import run
from tests.waiting import wait_until_async


def test_elections_from_the_isr_unclean_override_and_controlled_shutdown_on_zookeeper(make_registry):
    async def test(c):
        c.admin.create_topic(TopicAssignment("isr", {0: (1, 2, 3)}), {})
        c.admin.create_topic(TopicAssignment("dirty", {0: (1, 2)}), {"unclean.leader.election.enable": "true"})
        c.admin.create_topic(TopicAssignment("moved", {0: (2, 3, 1)}), {})
        await wait_until_async(
            lambda: all(c.state(t) is not None for t in ("isr", "dirty", "moved")),
            5,
            "the states of isr, dirty and moved",
        )
        assert (c.state("isr").leader, c.state("isr").isr) == (1, (1, 2, 3))
        c.set_isr("isr", (1, 3))
        c.set_isr("dirty", (1,))
        c.kill(1)
        await wait_until_async(
            lambda: c.state("isr").leader == 3 and c.state("dirty").leader == 2,
            15,
            "broker 3 to lead isr and broker 2 dirty",
        )
        assert c.state("isr").isr == (3,) and c.state("dirty").isr == (2,)
        assert await c.controller.controlled_shutdown(2) == [("dirty", 0)]  # its only other replica is dead
        st = c.state("moved")
        # broker 1's death took it out of the ISR (epoch 1), the controlled shutdown moved the leadership (epoch 2)
        assert (st.leader, st.isr, st.leader_epoch) == (3, (3,), 2)

    run([1, 2, 3], test, make_registry)
