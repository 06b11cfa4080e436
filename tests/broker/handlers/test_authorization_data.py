"""Kafka's per-API authorization on the data path (reference/security.md §6, Kafka 3.9's ``KafkaApis``): Metadata,
Produce, Fetch, ListOffsets, OffsetForLeaderEpoch, DescribeProducers and WriteTxnMarkers called as ``User:bob``
without the ACL Kafka requires (Kafka's error) and with it (served), including the cases of Kafka's
``AuthorizerIntegrationTest``: all-topics Metadata hides topics, an unauthorized missing topic answers
TOPIC_AUTHORIZATION_FAILED and not UNKNOWN_TOPIC_OR_PARTITION, Describe alone cannot produce, replica fetches
need ClusterAction, transactional produce needs Write on the transactional id."""

from __future__ import annotations

import pytest

from broker.api import CloseConnection
from broker.cluster.memory_registry import MemoryRegistryStore
from broker.config import BrokerConfig
from broker.handlers import (
    describe_producers,
    fetch,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
    write_txn_markers,
)
from broker.security.authorizer import AclAuthorizer
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclPermissionType, supported_operations

from ..requests import batch, fetch_body, produce_body
from ..txn_wire import markers_body, txn_batch
from .acl_services import BOB, NOT_REQUESTED, Op, Rt, Secured

E = ErrorCode
MD = API_BY_KEY[ApiKey.METADATA].Request


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def sec(tmp_path, registry):
    # the transactional batches here have no coordinator behind them: KIP-890's verification (tested in
    # test_transactions_v2) would refuse them before the append these tests look at
    config = BrokerConfig.from_properties(
        {
            "broker.id": "0",
            "log.dirs": str(tmp_path),
            "zookeeper.connect": "memory:services-builder",
            "transaction.partition.verification.enable": "false",
        }
    )
    s = Secured(tmp_path, registry, config=config)
    s.topic("secret")
    s.topic("visible")
    return s


def topics_of(resp) -> dict[str, int]:
    return {t.name: t.error_code for t in resp.topics}


# Metadata


def test_all_topics_metadata_silently_leaves_out_topics_the_principal_may_not_describe(sec):
    assert sec.call(metadata, 12, topics=None).topics == []
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "visible")
    assert topics_of(sec.call(metadata, 12, topics=None)) == {"visible": E.NONE}
    assert topics_of(sec.call(metadata, 0, topics=[])) == {"visible": E.NONE}  # v0: empty is all


@pytest.mark.parametrize("auto_create", [True, False])
def test_a_named_topic_without_describe_is_refused_whether_or_not_it_exists(sec, registry, auto_create):
    (secret, missing) = sec.call(
        metadata,
        12,
        topics=[MD.MetadataRequestTopic(name=n) for n in ("secret", "missing")],
        allow_auto_topic_creation=auto_create,
    ).topics
    for t in (secret, missing):
        assert t.error_code == E.TOPIC_AUTHORIZATION_FAILED, t.name  # 29, not 3: nothing leaks
        assert t.partitions == [] and t.topic_id.int == 0 and not t.is_internal
    assert "missing" not in registry.topics()  # and nothing was created
    sec.grant(Op.READ, Rt.TOPIC, "secret")  # Read implies Describe
    (secret,) = sec.call(metadata, 12, topics=[MD.MetadataRequestTopic(name="secret")]).topics
    assert secret.error_code == E.NONE and [p.partition_index for p in secret.partitions] == [0]


def test_a_topic_named_by_id_without_describe_is_refused_without_its_name(sec):
    topic_id = sec.services.metadata.topics["secret"].topic_id
    (t,) = sec.call(metadata, 12, topics=[MD.MetadataRequestTopic(name=None, topic_id=topic_id)]).topics
    assert (t.error_code, t.name, t.topic_id) == (E.TOPIC_AUTHORIZATION_FAILED, None, topic_id)
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    (t,) = sec.call(metadata, 12, topics=[MD.MetadataRequestTopic(name=None, topic_id=topic_id)]).topics
    assert (t.error_code, t.name) == (E.NONE, "secret")


def test_auto_creation_needs_create_on_the_cluster_or_the_topic(sec, registry):
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "fresh")
    ask = [MD.MetadataRequestTopic(name="fresh")]
    (t,) = sec.call(metadata, 12, topics=ask, allow_auto_topic_creation=True).topics
    assert t.error_code == E.TOPIC_AUTHORIZATION_FAILED and "fresh" not in registry.topics()
    (t,) = sec.call(metadata, 12, topics=ask, allow_auto_topic_creation=False).topics
    assert t.error_code == E.UNKNOWN_TOPIC_OR_PARTITION  # no creation asked: Describe is enough to learn it is missing
    sec.grant(Op.CREATE, Rt.TOPIC, "fresh")
    (t,) = sec.call(metadata, 12, topics=ask, allow_auto_topic_creation=True).topics
    assert t.error_code != E.TOPIC_AUTHORIZATION_FAILED and "fresh" in registry.topics()  # created


def test_create_on_the_cluster_lets_auto_creation_create_any_describable_topic(sec, registry):
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "other")
    sec.grant(Op.CREATE, Rt.CLUSTER)
    (t,) = sec.call(metadata, 12, topics=[MD.MetadataRequestTopic(name="other")], allow_auto_topic_creation=True).topics
    assert t.error_code != E.TOPIC_AUTHORIZATION_FAILED and "other" in registry.topics()


def bits(*ops) -> int:
    return sum(1 << op for op in ops)


def test_metadata_authorized_operations_bitfields(sec):
    sec.grant(Op.READ, Rt.TOPIC, "visible")
    ask = [MD.MetadataRequestTopic(name=n) for n in ("visible", "secret")]
    resp = sec.call(
        metadata, 10, topics=ask, include_topic_authorized_operations=True, include_cluster_authorized_operations=True
    )
    visible, secret = resp.topics
    assert visible.topic_authorized_operations == bits(Op.READ, Op.DESCRIBE)
    assert secret.topic_authorized_operations == NOT_REQUESTED  # refused Describe: no bitfield
    assert resp.cluster_authorized_operations == 0  # asked, but no Describe on the cluster
    sec.grant(Op.DESCRIBE, Rt.CLUSTER)
    sec.grant(Op.IDEMPOTENT_WRITE, Rt.CLUSTER)
    resp = sec.call(metadata, 10, topics=ask, include_cluster_authorized_operations=True)
    assert resp.cluster_authorized_operations == bits(Op.DESCRIBE, Op.IDEMPOTENT_WRITE)
    assert resp.topics[0].topic_authorized_operations == NOT_REQUESTED  # not asked
    assert sec.call(metadata, 10, topics=ask).cluster_authorized_operations == NOT_REQUESTED


# Produce


def produce_to(sec, topic, records=None, acks=1, transactional_id=None):
    body = produce_body(topic, 0, records if records is not None else batch([b"v"]), acks=acks)
    body.transactional_id = transactional_id
    return sec.send(produce, 9, body)


def code(resp) -> int:
    return resp.responses[0].partition_responses[0].error_code


def test_produce_needs_write_on_the_topic_and_describe_is_not_enough(sec):
    assert code(produce_to(sec, "secret")) == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    assert code(produce_to(sec, "secret")) == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.WRITE, Rt.TOPIC, "secret")
    resp = produce_to(sec, "secret")
    assert code(resp) == E.NONE and resp.responses[0].partition_responses[0].base_offset == 0


def test_produce_to_a_missing_topic_without_write_answers_authorization_not_unknown_topic(sec):
    assert code(produce_to(sec, "missing")) == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.WRITE, Rt.TOPIC, "missing")
    assert code(produce_to(sec, "missing")) == E.UNKNOWN_TOPIC_OR_PARTITION


def test_a_deny_acl_beats_the_allow(sec):
    sec.grant(Op.ALL, Rt.TOPIC, "secret")
    sec.grant(Op.WRITE, Rt.TOPIC, "secret", permission=AclPermissionType.DENY)
    assert code(produce_to(sec, "secret")) == E.TOPIC_AUTHORIZATION_FAILED


def test_unauthorized_acks_0_produce_closes_the_connection(sec):
    assert isinstance(produce_to(sec, "secret", acks=0), CloseConnection)


def test_transactional_produce_needs_write_on_the_transactional_id(sec):
    sec.grant(Op.WRITE, Rt.TOPIC, "secret")
    sec.grant(Op.WRITE, Rt.TOPIC, "visible")
    records = txn_batch(7_000_001, [b"t"])
    body = produce_body("secret", 0, records)
    body.topic_data.append(produce_body("visible", 0, batch([b"plain"])).topic_data[0])
    body.transactional_id = "tx-1"
    resp = sec.send(produce, 9, body)
    answers = [(t.name, p.error_code) for t in resp.responses for p in t.partition_responses]
    assert answers == [
        ("secret", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ("visible", E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
    ]
    rm = sec.services.replica_manager
    assert [rm.get_partition(t, 0).log.log_end_offset for t in ("secret", "visible")] == [0, 0]  # nothing appended
    assert isinstance(produce_to(sec, "secret", records, acks=0, transactional_id="tx-1"), CloseConnection)
    assert code(produce_to(sec, "secret", records, transactional_id=None)) == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    sec.grant(Op.WRITE, Rt.TRANSACTIONAL_ID, "tx-1")
    assert code(produce_to(sec, "secret", records, transactional_id="tx-1")) == E.NONE


# Fetch


def fetch_from(sec, topic, replica_id=-1):
    body = fetch_body(topic, 0, 0)
    body.replica_id = replica_id
    return sec.send(fetch, 12, body).responses[0].partitions[0]


def test_consumer_fetch_needs_read_on_the_topic_before_its_existence_is_checked(sec):
    sec.grant(Op.WRITE, Rt.TOPIC, "secret")
    assert code(produce_to(sec, "secret")) == E.NONE
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    assert fetch_from(sec, "secret").error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert fetch_from(sec, "missing").error_code == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.READ, Rt.TOPIC, "secret")
    part = fetch_from(sec, "secret")
    assert part.error_code == E.NONE and part.high_watermark == 1 and len(part.records) > 0
    sec.grant(Op.READ, Rt.TOPIC, "missing")
    assert fetch_from(sec, "missing").error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_replica_fetch_needs_cluster_action(sec):
    """CVE-2018-1288: a follower's fetch (replica_id >= 0) without ClusterAction gets TOPIC_AUTHORIZATION_FAILED
    on every partition, as Kafka answers it, whatever it may read as a consumer."""
    sec.grant(Op.ALL, Rt.TOPIC, "secret")
    assert fetch_from(sec, "secret", replica_id=1).error_code == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.CLUSTER_ACTION, Rt.CLUSTER)
    # authorized: broker 1 is no replica of the partition, which is what it is told now
    assert fetch_from(sec, "secret", replica_id=1).error_code == E.NOT_LEADER_OR_FOLLOWER


# ListOffsets, OffsetForLeaderEpoch


LO = API_BY_KEY[ApiKey.LIST_OFFSETS].Request


def list_offsets_of(sec, topic, version=7):
    parts = [LO.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1, max_num_offsets=1)]
    resp = sec.call(list_offsets, version, replica_id=-1, topics=[LO.ListOffsetsTopic(name=topic, partitions=parts)])
    return resp.topics[0].partitions[0]


@pytest.mark.parametrize("version", [0, 1, 7])
def test_list_offsets_needs_describe_on_the_topic(sec, version):
    for topic in ("secret", "missing"):
        p = list_offsets_of(sec, topic, version)
        assert (p.error_code, p.offset) == (E.TOPIC_AUTHORIZATION_FAILED, -1), topic
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    assert list_offsets_of(sec, "secret", version).error_code == E.NONE


OFLE = API_BY_KEY[ApiKey.OFFSET_FOR_LEADER_EPOCH].Request


def end_offset_of(sec, topic, principal=BOB):
    parts = [OFLE.OffsetForLeaderTopic.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)]
    resp = sec.call(
        offset_for_leader_epoch,
        4,
        principal=principal,
        replica_id=-1,
        topics=[OFLE.OffsetForLeaderTopic(topic=topic, partitions=parts)],
    )
    return resp.topics[0].partitions[0]


def test_offset_for_leader_epoch_needs_describe_on_the_topic_or_cluster_action(sec):
    for topic in ("secret", "missing"):
        assert end_offset_of(sec, topic).error_code == E.TOPIC_AUTHORIZATION_FAILED, topic
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    assert end_offset_of(sec, "secret").error_code == E.NONE
    sec.grant(Op.CLUSTER_ACTION, Rt.CLUSTER, principal="User:broker")
    assert end_offset_of(sec, "visible", principal="User:broker").error_code == E.NONE
    assert end_offset_of(sec, "missing", principal="User:broker").error_code == E.UNKNOWN_TOPIC_OR_PARTITION


# DescribeProducers, WriteTxnMarkers


DP = API_BY_KEY[ApiKey.DESCRIBE_PRODUCERS].Request


def producers_of(sec, topic):
    resp = sec.call(describe_producers, 0, topics=[DP.TopicRequest(name=topic, partition_indexes=[0, 1])])
    return [(p.partition_index, p.error_code) for p in resp.topics[0].partitions]


def test_describe_producers_needs_read_on_the_topic(sec):
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    for topic in ("secret", "missing"):
        assert producers_of(sec, topic) == [(0, E.TOPIC_AUTHORIZATION_FAILED), (1, E.TOPIC_AUTHORIZATION_FAILED)]
    sec.grant(Op.READ, Rt.TOPIC, "secret")
    assert producers_of(sec, "secret") == [(0, E.NONE), (1, E.UNKNOWN_TOPIC_OR_PARTITION)]


def markers_of(sec, principal=BOB):
    resp = sec.send(write_txn_markers, 1, markers_body((7_000_002, 0, True, 0, {"secret": [0]})), principal)
    return resp.markers[0].topics[0].partitions[0].error_code


@pytest.mark.parametrize("operation", [Op.CLUSTER_ACTION, Op.ALTER])
def test_write_txn_markers_needs_cluster_action_or_alter_on_the_cluster(sec, operation):
    sec.grant(Op.ALL, Rt.TOPIC, "secret")
    assert markers_of(sec) == E.CLUSTER_AUTHORIZATION_FAILED
    assert sec.services.replica_manager.get_partition("secret", 0).log.log_end_offset == 0  # no marker written
    sec.grant(operation, Rt.CLUSTER)
    assert markers_of(sec) == E.NONE


def test_without_an_authorizer_every_request_is_allowed_and_the_bitfields_hold_every_operation(tmp_path, registry):
    sec = Secured(tmp_path, registry, authorizer=AclAuthorizer(enabled=False))  # no authorizer.class.name
    sec.topic("t")
    resp = sec.call(
        metadata,
        10,
        topics=[MD.MetadataRequestTopic(name="t")],
        include_topic_authorized_operations=True,
        include_cluster_authorized_operations=True,
    )
    assert resp.topics[0].error_code == E.NONE
    assert resp.topics[0].topic_authorized_operations == bits(*supported_operations(Rt.TOPIC))
    assert resp.cluster_authorized_operations == bits(*supported_operations(Rt.CLUSTER))
    assert code(produce_to(sec, "t")) == E.NONE and fetch_from(sec, "t").error_code == E.NONE
