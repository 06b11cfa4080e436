"""DescribeTopicPartitions (75) on built services: name order, partitions in index order, the partition limit
and the cursor paging as Kafka's ``getTopicMetadataForDescribeTopicResponse``, errors of named topics, and
Describe authorization (all-topics filtering, named topics refused without their id)."""

from __future__ import annotations

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.cluster.registry import BrokerInfo, PartitionState
from broker.handlers import describe_topic_partitions as dtp
from broker.security.authorizer import AclAuthorizer
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode

from .acl_services import Op, Rt, Secured

E = ErrorCode
R = API_BY_KEY[dtp.API_KEY].Request


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def open_(tmp_path, registry):
    """No authorizer; topics a (3 partitions), b (1), c (4)."""
    s = Secured(tmp_path, registry, AclAuthorizer(enabled=False))
    for name, count in (("c", 4), ("a", 3), ("b", 1)):
        s.topic(name, count)
    return s


def page(sec, names=(), limit=2000, cursor=None, principal="User:bob"):
    body = R(
        topics=[R.TopicRequest(name=n) for n in names],
        response_partition_limit=limit,
        cursor=None if cursor is None else R.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )
    return sec.send(dtp, 0, body, principal)


def shape(resp):
    """[(topic, error, [partition indexes])], next cursor as (topic, index) or None."""
    topics = [(t.name, t.error_code, [p.partition_index for p in t.partitions]) for t in resp.topics]
    nxt = resp.next_cursor
    return topics, None if nxt is None else (nxt.topic_name, nxt.partition_index)


@pytest.mark.parametrize(
    "names, limit, cursor, want",
    [
        ((), 2000, None, ([("a", 0, [0, 1, 2]), ("b", 0, [0]), ("c", 0, [0, 1, 2, 3])], None)),
        (("c", "a"), 2000, None, ([("a", 0, [0, 1, 2]), ("c", 0, [0, 1, 2, 3])], None)),
        ((), 2, None, ([("a", 0, [0, 1])], ("a", 2))),
        ((), 3, None, ([("a", 0, [0, 1, 2])], ("b", 0))),  # a filled the page exactly: b starts the next
        ((), 5, None, ([("a", 0, [0, 1, 2]), ("b", 0, [0]), ("c", 0, [0])], ("c", 1))),
        ((), 2, ("a", 2), ([("a", 0, [2]), ("b", 0, [0])], ("c", 0))),
        ((), 2000, ("b", 0), ([("b", 0, [0]), ("c", 0, [0, 1, 2, 3])], None)),
        ((), 3, ("c", 1), ([("c", 0, [1, 2, 3])], None)),
        (("a", "zz"), 2000, None, ([("a", 0, [0, 1, 2]), ("zz", E.UNKNOWN_TOPIC_OR_PARTITION, [])], None)),
        (("b", "c"), 2000, ("a", 0), ([("b", E.INVALID_REQUEST, []), ("c", E.INVALID_REQUEST, [])], None)),
    ],
)
def test_pages_follow_kafkas_order_limit_and_cursor(open_, names, limit, cursor, want):
    assert shape(page(open_, names, limit, cursor)) == want


def test_every_partition_is_listed_once_when_paging_with_the_cursor(open_):
    seen, cursor = [], None
    for _ in range(10):
        resp = page(open_, limit=2, cursor=cursor)
        seen += [(t.name, p.partition_index) for t in resp.topics for p in t.partitions]
        if resp.next_cursor is None:
            break
        cursor = (resp.next_cursor.topic_name, resp.next_cursor.partition_index)
    assert seen == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("c", 0), ("c", 1), ("c", 2), ("c", 3)]


def test_the_broker_limit_caps_the_requested_partition_limit(tmp_path, registry):
    from broker.config import BrokerConfig

    config = BrokerConfig.from_properties(
        {
            "broker.id": "0",
            "log.dirs": str(tmp_path),
            "zookeeper.connect": "memory:x",
            "max.request.partition.size.limit": "2",
        }
    )
    s = Secured(tmp_path, registry, AclAuthorizer(enabled=False), config=config)
    s.topic("a", 3)
    assert shape(page(s, limit=100)) == ([("a", 0, [0, 1])], ("a", 2))


def test_partitions_carry_ids_replicas_isr_offline_replicas_and_empty_elr(open_):
    cache = open_.services.metadata
    cache.set_brokers({0: BrokerInfo(0, "127.0.0.1", 9092), 1: BrokerInfo(1, "127.0.0.1", 9093)})
    from broker.cluster.registry import TopicAssignment

    assignment = TopicAssignment("r", {0: (1, 0, 2), 1: (2, 1)})
    cache.set_topic(assignment, {0: PartitionState(1, 4, (1, 0), 1), 1: PartitionState(2, 7, (2,), 1)}, {})
    (t,) = page(open_, ["r"]).topics
    assert (t.error_code, t.topic_id, t.is_internal) == (E.NONE, cache.topics["r"].topic_id, False)
    p0, p1 = t.partitions
    assert (p0.leader_id, p0.leader_epoch, p0.replica_nodes, p0.isr_nodes, p0.offline_replicas) == (
        1,
        4,
        [1, 0, 2],
        [1, 0],
        [2],
    )
    assert (p1.leader_id, p1.leader_epoch, p1.offline_replicas) == (-1, 7, [2])  # broker 2 is not registered
    assert (p0.eligible_leader_replicas, p0.last_known_elr, p0.error_code) == ([], [], E.NONE)


def test_all_topics_leaves_out_what_the_principal_may_not_describe(tmp_path, registry):
    s = Secured(tmp_path, registry)
    s.topic("a", 1)
    s.topic("secret", 2)
    s.grant(Op.DESCRIBE, Rt.TOPIC, "a")
    assert shape(page(s)) == ([("a", 0, [0])], None)
    (a,) = page(s).topics
    assert a.topic_authorized_operations != -2147483648 and a.topic_authorized_operations & (1 << int(Op.DESCRIBE))


def test_a_named_topic_without_describe_is_refused_without_its_id_whether_or_not_it_exists(tmp_path, registry):
    s = Secured(tmp_path, registry)
    s.topic("a", 1)
    s.topic("secret", 2)
    s.grant(Op.DESCRIBE, Rt.TOPIC, "a")
    resp = page(s, ["secret", "a", "nothere"])
    assert shape(resp) == (
        [("a", 0, [0]), ("nothere", E.TOPIC_AUTHORIZATION_FAILED, []), ("secret", E.TOPIC_AUTHORIZATION_FAILED, [])],
        None,
    )
    assert all(t.topic_id.int == 0 for t in resp.topics[1:])
