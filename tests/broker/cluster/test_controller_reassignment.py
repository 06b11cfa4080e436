"""The controller's partition reassignment against a registry, with the replicas' ISR changes written by the
test (as leaders write them): start, completion with a leader move, cancellation, errors, listing, failover."""

from __future__ import annotations

from broker.cluster.controller import Controller
from broker.cluster.reassignment import ReplicaAssignment
from broker.cluster.registry import TopicAssignment
from broker.metadata.cache import MetadataCache
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until_async

from .test_controller_cluster import run

OK = (ErrorCode.NONE, None)


async def reassign_0_1_to_1_2(c):
    """[0, 1] led by 0 -> [1, 2], driven by ISR changes; shared by the memory and ZooKeeper tests."""
    c.admin.create_topic(TopicAssignment("t", {0: (0, 1), 1: (0, 1)}), {})
    await wait_until_async(lambda: c.state("t", 1) is not None, 5, "t-1's state")
    assert (c.state("t").leader, c.state("t").isr, c.state("t").leader_epoch) == (0, (0, 1), 0)

    assert await c.controller.alter_reassignments({("t", 0): (1, 2)}) == {("t", 0): OK}
    t = c.admin.topic("t")
    assert (t.partitions[0], t.adding_replicas, t.removing_replicas) == ((1, 2, 0), {0: (2,)}, {0: (0,)})
    assert t.partitions[1] == (0, 1)
    assert await c.controller.list_reassignments(None) == [("t", 0, ReplicaAssignment((1, 2, 0), (2,), (0,)))]
    assert await c.controller.list_reassignments({"t": [1]}) == []
    assert c.state("t").leader == 0  # nothing moves before the new replica is in sync

    c.set_isr("t", (0, 1, 2))  # broker 2 caught up: the leader (0) added it to the ISR
    await wait_until_async(lambda: c.admin.topic("t").partitions[0] == (1, 2), 5, "t-0's replicas (1, 2)")
    t = c.admin.topic("t")
    assert t.adding_replicas == {} and t.removing_replicas == {}
    st = c.state("t")
    assert (st.leader, st.isr, st.leader_epoch) == (1, (1, 2), 1)  # the leader moved to a target replica
    assert await c.controller.list_reassignments(None) == []


def test_reassignment_adds_replicas_then_moves_the_leader_and_removes_the_old_ones_once_in_sync():
    run([0, 1, 2], reassign_0_1_to_1_2)


def test_a_target_already_in_sync_completes_at_once():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2, 3)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        assert await c.controller.alter_reassignments({("t", 0): (3, 2)}) == {("t", 0): OK}
        await wait_until_async(lambda: c.admin.topic("t").partitions[0] == (3, 2), 5, "t-0's replicas (3, 2)")
        st = c.state("t")
        assert (st.leader, st.isr, st.leader_epoch) == (3, (2, 3), 1)  # the first live in-sync target replica
        assert not c.admin.topic("t").is_reassigning(0)

    run([1, 2, 3], test)


def test_cancelling_goes_back_to_the_original_replicas_and_takes_the_added_ones_out_of_the_isr():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        assert await c.controller.alter_reassignments({("t", 0): (3, 4)}) == {("t", 0): OK}
        assert c.admin.topic("t").partitions[0] == (3, 4, 1, 2)
        c.set_isr("t", (1, 2, 3))  # 3 caught up, 4 not yet: not complete
        assert await c.controller.alter_reassignments({("t", 0): None}) == {("t", 0): OK}
        t = c.admin.topic("t")
        assert (t.partitions[0], t.is_reassigning(0)) == ((1, 2), False)
        st = c.state("t")
        assert (st.leader, st.isr) == (1, (1, 2))
        code, message = (await c.controller.alter_reassignments({("t", 0): None}))[("t", 0)]
        assert code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS and "t-0" in message

    run([1, 2, 3, 4], test)


def test_a_new_target_during_a_reassignment_starts_again_from_the_original_replicas():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        await c.controller.alter_reassignments({("t", 0): (2, 3)})
        c.set_isr("t", (1, 2, 3))
        await wait_until_async(lambda: c.admin.topic("t").partitions[0] == (2, 3), 5, "t-0's replicas (2, 3)")
        await c.controller.alter_reassignments({("t", 0): (4, 2)})
        t = c.admin.topic("t")
        assert (t.partitions[0], t.adding_replicas, t.removing_replicas) == ((4, 2, 3), {0: (4,)}, {0: (3,)})
        await c.controller.alter_reassignments({("t", 0): (1, 2)})  # 4 was being added: dropped again
        t = c.admin.topic("t")
        assert (t.partitions[0], t.adding_replicas, t.removing_replicas) == ((1, 2, 3), {0: (1,)}, {0: (3,)})

    run([1, 2, 3, 4], test)


def test_refused_reassignments_name_the_problem_and_change_nothing():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (1, 2)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        before = c.admin.topic("t")
        results = await c.controller.alter_reassignments(
            {
                ("t", 0): (1, 9),
                ("t", 1): (1, 2),
                ("nope", 0): (1, 2),
                ("t", 2): (),
            }
        )
        assert results[("t", 0)] == (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "t-0: brokers [9] are not live (replicas [1, 9])",
        )
        assert results[("t", 1)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert results[("nope", 0)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert results[("t", 2)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        dup = await c.controller.alter_reassignments({("t", 0): (2, 2)})
        assert dup[("t", 0)][0] == ErrorCode.INVALID_REPLICA_ASSIGNMENT
        assert c.admin.topic("t") == before

    run([1, 2], test)


def test_a_new_controller_resumes_the_ongoing_reassignment():
    async def test(c):
        c.admin.create_topic(TopicAssignment("t", {0: (0, 1)}), {})
        await wait_until_async(lambda: c.state("t") is not None, 5, "t's state")
        await c.controller.alter_reassignments({("t", 0): (1, 2)})
        await c.controller.stop()
        c.set_isr("t", (0, 1, 2))  # caught up while nobody was the controller
        second = c.new_registry()
        try:
            c.controller = Controller(7, second, c.run_blocking, c.config, metadata=MetadataCache(7))
            c.controller.start()
            await wait_until_async(lambda: c.admin.topic("t").partitions[0] == (1, 2), 5, "t-0's replicas (1, 2)")
            assert c.state("t").leader == 1
        finally:
            await c.controller.stop()
            second.close()
            c.controller = None

    run([0, 1, 2], test)
