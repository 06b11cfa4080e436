"""The controller's leader elections on request (ElectLeaders) against an in-process registry: preferred and
unclean elections with Kafka's per-partition errors, all partitions at once, and a broker that is not the
controller."""

from __future__ import annotations

from broker.cluster.controller import Controller
from broker.cluster.controller_elections import ElectionType
from broker.cluster.registry import TopicAssignment
from broker.metadata.cache import MetadataCache
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until_async

from .test_controller_cluster import run

E = ErrorCode
PREFERRED, UNCLEAN = ElectionType.PREFERRED, ElectionType.UNCLEAN


async def preferred_not_leading(c):
    """t-0 (1, 2) led by 2 after 1 came back in sync; t-1 (2, 1) led by its preferred replica 2."""
    c.admin.create_topic(TopicAssignment("t", {0: (1, 2), 1: (2, 1)}), {})
    await wait_until_async(lambda: c.state("t", 1) is not None, 5, "t-1's state")
    c.kill(1)
    await wait_until_async(lambda: c.state("t", 0).leader == 2, 5, "broker 2 to lead t-0")
    c.start_broker(1)
    await wait_until_async(lambda: 1 in c.controller.live, 5, "the controller to see broker 1 again")


def test_preferred_election_moves_leadership_to_the_preferred_replica_once_in_sync():
    async def test(c):
        await preferred_not_leading(c)
        epoch = c.state("t", 0).leader_epoch
        (code, message), *_ = (await c.controller.elect_leaders(PREFERRED, [("t", 0)])).values()
        assert code == E.PREFERRED_LEADER_NOT_AVAILABLE and "preferred replica 1 is not in the ISR [2]" in message
        assert c.state("t", 0).leader == 2
        c.set_isr("t", (2, 1))
        got = await c.controller.elect_leaders(PREFERRED, [("t", 0), ("t", 1), ("t", 7), ("nope", 0)])
        assert got[("t", 0)] == (E.NONE, None)
        assert got[("t", 1)] == (E.ELECTION_NOT_NEEDED, None)
        assert got[("t", 7)] == (E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-7")
        assert got[("nope", 0)] == (E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")
        st = c.state("t", 0)
        assert (st.leader, st.isr, st.leader_epoch) == (1, (2, 1), epoch + 1)

    run([1, 2], test, auto_leader_rebalance_enable=False)


def test_preferred_election_of_a_dead_preferred_replica_says_it_is_not_live():
    async def test(c):
        await preferred_not_leading(c)
        c.kill(1)
        await wait_until_async(lambda: 1 not in c.controller.live, 5, "the controller to see broker 1 leave")
        (code, message), *_ = (await c.controller.elect_leaders(PREFERRED, [("t", 0)])).values()
        assert (code, message) == (
            E.PREFERRED_LEADER_NOT_AVAILABLE,
            "Failed to elect leader for partition t-0: preferred replica 1 is not live",
        )

    run([1, 2], test, auto_leader_rebalance_enable=False)


def test_all_partitions_answer_only_those_that_needed_an_election():
    async def test(c):
        await preferred_not_leading(c)
        c.set_isr("t", (2, 1))
        assert await c.controller.elect_leaders(PREFERRED, None) == {("t", 0): (E.NONE, None)}
        assert await c.controller.elect_leaders(PREFERRED, None) == {}
        assert c.state("t", 0).leader == 1

    run([1, 2], test, auto_leader_rebalance_enable=False)


def test_unclean_election_elects_an_out_of_sync_replica_of_an_offline_partition():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3), 1: (2, 3)}), {})
        await wait_until_async(lambda: c.state("t", 1) is not None, 5, "t-1's state")
        c.set_isr("t", (1,))
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader == -1, 5, "t-0 to go offline")  # unclean is off
        got = await c.controller.elect_leaders(UNCLEAN, [("t", 0), ("t", 1)])
        assert got == {("t", 0): (E.NONE, None), ("t", 1): (E.ELECTION_NOT_NEEDED, None)}
        st = c.state("t")
        assert (st.leader, st.isr) == (2, (2,))

    run([1, 2, 3], test)


def test_unclean_election_without_a_live_replica_finds_no_eligible_leader():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1,)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        c.kill(1)
        await wait_until_async(lambda: c.state("t").leader == -1, 5, "t-0 to go offline")
        (code, message), *_ = (await c.controller.elect_leaders(UNCLEAN, [("t", 0)])).values()
        assert code == E.ELIGIBLE_LEADERS_NOT_AVAILABLE and "none of its replicas [1] is live" in message

    run([1, 2], test)


def test_a_broker_that_is_not_the_controller_answers_none():
    async def test(c):
        other = Controller(5, c.admin, c.run_blocking, c.config, metadata=MetadataCache(5))
        assert await other.elect_leaders(PREFERRED, None) is None

    run([1], test)
