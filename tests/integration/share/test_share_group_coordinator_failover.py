"""A share group survives the loss of its group coordinator in a cluster of broker processes: two confluent-kafka
ShareConsumers read a 2-partition topic (led elsewhere) while the broker coordinating the group (the leader of its
``__consumer_offsets`` partition) is SIGKILLed; the next coordinator rebuilds the group from its records, the same
members go on heartbeating (ShareGroupDescribe names them before and after), and every record, before and after,
is delivered, none accepted twice."""

from __future__ import annotations

import pytest

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from tests.share_scenarios import ShareMember, produce, share_group, stop_all, topic_maker
from tests.waiting import wait_until

from ...broker.wire import Wire
from .conftest import share_cluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def gcluster(zookeeper, tmp_path_factory):
    c = share_cluster(zookeeper, tmp_path_factory, "share-gc-failover")
    yield c
    c.stop()


def describe(bootstrap: str, group: str):
    """The group as ShareGroupDescribe answers it (FindCoordinator to the first of ``bootstrap`` first), or None
    while it cannot."""
    with Wire(bootstrap.split(",")[0]) as w:
        found = w.call(ApiKey.FIND_COORDINATOR, 4, key_type=0, coordinator_keys=[group]).coordinators[0]
        if found.error_code != ErrorCode.NONE:
            return None
    with Wire(f"{found.host}:{found.port}") as w:
        R = API_BY_KEY[ApiKey.SHARE_GROUP_DESCRIBE].Request
        (d,) = w.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, R(group_ids=[group], include_authorized_operations=False)).groups
    return d if d.error_code == ErrorCode.NONE else None


def test_the_share_group_and_its_members_survive_their_coordinator_being_killed(gcluster):
    bootstrap = gcluster.bootstrap_servers
    group = share_group(bootstrap)
    topic = topic_maker(bootstrap, replication_factor=3)(2)
    coordinator, data, _ = gcluster.broker_ids
    gcluster.pin_coordinator(group, coordinator)
    for p in (0, 1):
        gcluster.move_leader(topic, p, data)
    members = [ShareMember(i, bootstrap, group, topic) for i in range(2)]
    try:
        produce(bootstrap, topic, [b"before-%d" % i for i in range(10)])

        def received() -> set[tuple[int, int]]:
            return {(d.partition, d.offset) for m in members for d in m.received()}

        wait_until(lambda: len(received()) == 10, 60, "the first 10 records")
        before = wait_until(lambda: (d := describe(bootstrap, group)) is not None and len(d.members) == 2 and d, 30)
        ids = sorted(m.member_id for m in before.members)

        others = [b for b in gcluster.broker_ids if b != coordinator]
        survivors = ",".join(f"127.0.0.1:{gcluster.ports[b]}" for b in others)
        with gcluster.broker_stopped(coordinator, clean=False):
            after = wait_until(
                lambda: (d := describe(survivors, group)) is not None and d,
                60,
                "the next coordinator to load the group",
            )
            assert sorted(m.member_id for m in after.members) == ids  # the same members, not new ones
            produce(survivors, topic, [b"after-%d" % i for i in range(10)])
            wait_until(lambda: len(received()) == 20, 60, "the 10 records produced after the failover")
            again = wait_until(lambda: (d := describe(survivors, group)) is not None and d, 30)
            assert sorted(m.member_id for m in again.members) == ids
            assert all(m.member_epoch >= before.assignment_epoch for m in again.members)
    finally:
        stop_all(members)
    deliveries = [d for m in members for d in m.deliveries]
    firsts = [(d.partition, d.offset) for d in deliveries if d.delivery_count == 1]
    assert len(firsts) == len(set(firsts)), "a record delivered twice with delivery count 1"
    assert {(d.partition, d.offset) for d in deliveries} == received()
