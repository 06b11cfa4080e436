"""The share coordinator and the persister on in-process brokers: state written through the persister is read
back, reloaded from ``__share_group_state`` alone, fenced by epochs, and served by the next coordinator after the
coordinator's broker stops (3 brokers, the topic replicated to all of them; the persister of a broker that is not
the coordinator sends the APIs over the network)."""

from __future__ import annotations

import uuid

import pytest

from broker.share.records import SHARE_GROUP_STATE_TOPIC, coordinator_key, share_state_partition_for
from broker.share.state_batches import PersistedState, StateBatch
from spark_kafkalog.client import AdminClient, NewTopic
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from ..conftest import start_brokers

B = StateBatch
SHARE_OVERRIDES = {
    "share_coordinator_state_topic_num_partitions": 3,
    "share.coordinator.snapshot.update.records.per.snapshot": 2,
}


@pytest.fixture(scope="module")
def one_broker(tmp_path_factory):
    (b,) = start_brokers(1, tmp_path_factory, **SHARE_OVERRIDES)
    yield b
    b.stop()


def new_topic(bootstrap: str, partitions: int = 2, replication: int = 1) -> str:
    name = f"share-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, replication)])
    return name


def topic_id_of(b, name: str) -> uuid.UUID:
    wait_until(lambda: name in b.broker.metadata.topics, 10)
    return b.broker.metadata.topics[name].topic_id


def test_state_written_through_the_persister_is_read_back_and_survives_a_reload(one_broker):
    b = one_broker
    tid = topic_id_of(b, new_topic(b.bootstrap_servers))
    persister, coordinator = b.broker.share_persister, b.broker.share_coordinator
    group = f"g-{uuid.uuid4().hex[:6]}"

    async def scenario():
        assert await persister.initialize(group, tid, 0, 0, -1) == (ErrorCode.NONE, None)
        assert (await persister.read(group, tid, 0, 0))[2] == PersistedState(0, -1, (), 0)
        for i in range(5):  # with a snapshot every 2 updates: U U S U U
            code, _ = await persister.write(group, tid, 0, 0, 0, i, [B(i, i + 3, 0, 1), B(i, i, 2, 1)])
            assert code == ErrorCode.NONE
        code, _ = await persister.write(group, tid, 0, 0, -1, 4, [])  # -1: the leader epoch is not checked
        assert code == ErrorCode.NONE
        return await persister.read(group, tid, 0, 0)

    code, _, state = b.call(scenario)
    assert code == ErrorCode.NONE
    assert state == PersistedState(0, 4, (B(4, 4, 2, 1), B(5, 7, 0, 1)), 0)

    p = share_state_partition_for(coordinator_key(group, tid, 0), 3)
    before = coordinator.shards[p].states[(group, tid, 0)]

    async def reload():
        part = b.broker.replica_manager.get_partition(SHARE_GROUP_STATE_TOPIC, p)
        await coordinator._load(p, part)

    b.call(reload)
    assert coordinator.shards[p].states[(group, tid, 0)] == before
    topic = b.broker.metadata.topics[SHARE_GROUP_STATE_TOPIC]
    assert topic.config.get("cleanup.policy") == "delete" and topic.num_partitions == 3


def test_epochs_fence_and_delete_forgets(one_broker):
    b = one_broker
    tid = topic_id_of(b, new_topic(b.bootstrap_servers))
    persister = b.broker.share_persister
    group = f"g-{uuid.uuid4().hex[:6]}"

    async def scenario():
        out = [await persister.initialize(group, tid, 1, 3, 10)]
        out.append((await persister.read(group, tid, 1, 5))[0])  # leader epoch 5 recorded
        out.append(await persister.write(group, tid, 1, 3, 4, 10, [B(10, 11, 2, 1)]))
        out.append(await persister.write(group, tid, 1, 2, 5, 10, [B(10, 11, 2, 1)]))
        out.append(await persister.initialize(group, tid, 1, 2, 0))
        out.append((await persister.read_summary(group, tid, 1, -1))[2])
        out.append(await persister.delete(group, tid, 1))
        out.append((await persister.read(group, tid, 1, 5))[0])
        out.append(await persister.initialize(group, uuid.uuid4(), 0, 0, 0))
        return out

    init, read, old_leader, old_state, old_init, summary, deleted, after, unknown = b.call(scenario)
    assert init == (ErrorCode.NONE, None) and read == ErrorCode.NONE
    assert old_leader[0] == ErrorCode.FENCED_LEADER_EPOCH
    assert old_state[0] == ErrorCode.FENCED_STATE_EPOCH
    assert old_init[0] == ErrorCode.FENCED_STATE_EPOCH
    assert summary == PersistedState(3, 10, (), 5)
    assert deleted == (ErrorCode.NONE, None)
    assert after == ErrorCode.INVALID_REQUEST  # uninitialized again
    assert unknown[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_prune_deletes_the_records_no_state_needs_and_a_reload_rebuilds_the_same_states(one_broker):
    b = one_broker
    tid = topic_id_of(b, new_topic(b.bootstrap_servers))
    persister, coordinator = b.broker.share_persister, b.broker.share_coordinator
    groups = [f"p-{uuid.uuid4().hex[:6]}" for _ in range(2)]

    async def scenario():
        for g in groups:
            assert (await persister.initialize(g, tid, 0, 0, 0))[0] == ErrorCode.NONE
        for i in range(7):  # snapshots every 2 updates
            for g in groups:
                assert (await persister.write(g, tid, 0, 0, 0, i, [B(i, i + 1, 2, 1)]))[0] == ErrorCode.NONE
        assert (await persister.delete(groups[1], tid, 0))[0] == ErrorCode.NONE

    b.call(scenario)
    p = share_state_partition_for(coordinator_key(groups[0], tid, 0), 3)
    shard = coordinator.shards[p]
    state = shard.states[(groups[0], tid, 0)]
    part = b.broker.replica_manager.get_partition(SHARE_GROUP_STATE_TOPIC, p)
    before = part.log.log_start_offset
    moved = b.call(coordinator.prune)
    others = [s for q, s in coordinator.shards.items() if q != p]
    assert moved.get(p, before) > before or any(o.states for o in others)
    assert part.log.log_start_offset == shard.redundant_offset(part.log.log_end_offset)

    async def reload():
        await coordinator._load(p, part)

    b.call(reload)
    assert coordinator.shards[p].states.get((groups[0], tid, 0)) == state
    assert (groups[1], tid, 0) not in coordinator.shards[p].states
