"""Kafka's per-API authorization of the admin APIs (reference/security.md §6, Kafka 3.9's ``KafkaApis`` and
``ConfigHelper``): topic administration (CreateTopics, DeleteTopics, DeleteRecords, CreatePartitions), configs
(DescribeConfigs, AlterConfigs, IncrementalAlterConfigs) and the cluster APIs (DescribeLogDirs, partition
reassignments, SCRAM credentials, DescribeCluster, ControlledShutdown), each called as ``User:bob`` without the
ACL Kafka requires (Kafka's error) and with it (served)."""

from __future__ import annotations

import pytest

from broker.cluster.memory_registry import MemoryRegistryStore
from broker.handlers import (
    alter_configs,
    alter_partition_reassignments,
    alter_user_scram_credentials,
    controlled_shutdown,
    create_partitions,
    create_topics,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_log_dirs,
    describe_user_scram_credentials,
    incremental_alter_configs,
    list_partition_reassignments,
)
from spark_kafkalog.protocol import API_BY_KEY, ErrorCode
from spark_kafkalog.security.sasl.scram import ScramMechanism

from .acl_services import NOT_REQUESTED, Op, Rt, Secured

E = ErrorCode
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8


def request_of(module):
    return API_BY_KEY[module.API_KEY].Request


@pytest.fixture
def registry():
    view = MemoryRegistryStore().view()
    view.start()
    yield view
    view.close()


@pytest.fixture
def sec(tmp_path, registry):
    s = Secured(tmp_path, registry)
    s.topic("secret")
    return s


# CreateTopics


def create(sec, name, version=7):
    CT = request_of(create_topics)
    topic = CT.CreatableTopic(name=name, num_partitions=2, replication_factor=1, assignments=[], configs=[])
    (res,) = sec.call(create_topics, version, topics=[topic], timeout_ms=0, validate_only=True).topics
    return res


def test_create_topics_needs_create_on_the_cluster_or_the_topic(sec):
    res = create(sec, "new")
    assert (res.error_code, res.error_message) == (E.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
    assert res.topic_config_error_code == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.CREATE, Rt.TOPIC, "new")
    res = create(sec, "new")
    assert res.error_code == E.NONE
    # created, but without DescribeConfigs on it the answer carries no configs, counts or id
    assert (res.num_partitions, res.replication_factor, res.configs, res.topic_id.int) == (-1, -1, [], 0)
    assert res.topic_config_error_code == E.TOPIC_AUTHORIZATION_FAILED
    sec.grant(Op.CREATE, Rt.CLUSTER)
    res = create(sec, "other")
    assert res.error_code == E.NONE and res.num_partitions == -1


def test_create_topics_answers_configs_with_describe_configs_on_the_topic(sec):
    sec.grant(Op.CREATE, Rt.CLUSTER)
    sec.grant(Op.DESCRIBE_CONFIGS, Rt.TOPIC, "new")
    res = create(sec, "new")
    assert (res.error_code, res.topic_config_error_code) == (E.NONE, E.NONE)
    assert (res.num_partitions, res.replication_factor) == (2, 1)
    assert "retention.ms" in {c.name for c in res.configs}


def test_a_failed_creation_carries_no_topic_config_error(sec):
    sec.grant(Op.CREATE, Rt.CLUSTER)
    res = create(sec, "secret")  # exists
    assert (res.error_code, res.topic_config_error_code) == (E.TOPIC_ALREADY_EXISTS, E.NONE)


# DeleteTopics, DeleteRecords, CreatePartitions


def delete(sec, *names, version=5):
    resp = sec.call(delete_topics, version, topic_names=list(names), timeout_ms=0)
    return {r.name: r.error_code for r in resp.responses}


def test_delete_topics_needs_delete_and_hides_existence_without_it(sec, registry):
    assert delete(sec, "secret", "missing") == {"secret": 29, "missing": 29}
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "secret")
    sec.grant(Op.DESCRIBE, Rt.TOPIC, "missing")
    assert delete(sec, "secret", "missing") == {"secret": 29, "missing": 29}  # Describe is not Delete
    assert registry.pending_topic_deletions() == []
    sec.grant(Op.DELETE, Rt.TOPIC, "secret")
    sec.grant(Op.DELETE, Rt.TOPIC, "missing")
    assert delete(sec, "secret", "missing") == {"secret": E.NONE, "missing": E.UNKNOWN_TOPIC_OR_PARTITION}
    assert registry.pending_topic_deletions() == ["secret"]


def test_delete_topics_by_id_without_describe_hides_the_name(sec):
    topic_id = sec.services.metadata.topics["secret"].topic_id
    DT = request_of(delete_topics)
    (res,) = sec.call(
        delete_topics, 6, topics=[DT.DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=0
    ).responses
    assert (res.error_code, res.name, res.topic_id) == (E.TOPIC_AUTHORIZATION_FAILED, None, topic_id)
    sec.grant(Op.DELETE, Rt.TOPIC, "secret")
    (res,) = sec.call(
        delete_topics, 6, topics=[DT.DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=0
    ).responses
    assert (res.error_code, res.name) == (E.NONE, "secret")


def delete_records_of(sec, topic):
    DR = request_of(delete_records)
    parts = [DR.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=0, offset=0)]
    resp = sec.call(delete_records, 2, topics=[DR.DeleteRecordsTopic(name=topic, partitions=parts)], timeout_ms=1000)
    p = resp.topics[0].partitions[0]
    return p.error_code, p.low_watermark


def test_delete_records_needs_delete_on_the_topic(sec):
    sec.grant(Op.ALTER, Rt.TOPIC, "secret")
    for topic in ("secret", "missing"):
        assert delete_records_of(sec, topic) == (E.TOPIC_AUTHORIZATION_FAILED, -1), topic
    sec.grant(Op.DELETE, Rt.TOPIC, "secret")
    assert delete_records_of(sec, "secret") == (E.NONE, 0)


def add_partitions(sec, topic):
    CP = request_of(create_partitions)
    topics = [CP.CreatePartitionsTopic(name=topic, count=2, assignments=None)]
    (res,) = sec.call(create_partitions, 3, topics=topics, timeout_ms=0, validate_only=True).results
    return res


def test_create_partitions_needs_alter_on_the_topic(sec):
    for topic in ("secret", "missing"):
        res = add_partitions(sec, topic)
        assert (res.error_code, res.error_message) == (
            E.TOPIC_AUTHORIZATION_FAILED,
            "The topic authorization is failed.",
        )
    sec.grant(Op.ALTER, Rt.TOPIC, "secret")
    assert add_partitions(sec, "secret").error_code == E.NONE


# DescribeConfigs, AlterConfigs, IncrementalAlterConfigs


def describe(sec, resource_type, name):
    DC = request_of(describe_configs)
    resources = [DC.DescribeConfigsResource(resource_type=resource_type, resource_name=name, configuration_keys=None)]
    (res,) = sec.call(describe_configs, 4, resources=resources).results
    return res


@pytest.mark.parametrize(
    ("resource_type", "name", "denied", "grant"),
    [
        (TOPIC, "secret", E.TOPIC_AUTHORIZATION_FAILED, (Op.DESCRIBE_CONFIGS, Rt.TOPIC, "secret")),
        (TOPIC, "secret", E.TOPIC_AUTHORIZATION_FAILED, (Op.ALTER_CONFIGS, Rt.TOPIC, "secret")),  # implies it
        (BROKER, "0", E.CLUSTER_AUTHORIZATION_FAILED, (Op.DESCRIBE_CONFIGS, Rt.CLUSTER)),
        (BROKER, "", E.CLUSTER_AUTHORIZATION_FAILED, (Op.DESCRIBE_CONFIGS, Rt.CLUSTER)),
    ],
)
def test_describe_configs_needs_describe_configs_on_the_resource(sec, resource_type, name, denied, grant):
    res = describe(sec, resource_type, name)
    assert (res.error_code, res.configs) == (denied, [])
    sec.grant(*grant)
    res = describe(sec, resource_type, name)
    assert res.error_code == E.NONE
    assert res.configs or name == ""  # the cluster-wide dynamic defaults: none set here


def test_describe_configs_refuses_an_unauthorized_missing_topic_and_broker_loggers_by_authorization_first(sec):
    assert describe(sec, TOPIC, "missing").error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert describe(sec, BROKER_LOGGER, "0").error_code == E.CLUSTER_AUTHORIZATION_FAILED
    sec.grant(Op.DESCRIBE_CONFIGS, Rt.TOPIC, "missing")
    assert describe(sec, TOPIC, "missing").error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def alter(sec, module, resource_type, name, key, value):
    AC = request_of(module)
    if module is incremental_alter_configs:
        config = AC.AlterConfigsResource.AlterableConfig(name=key, config_operation=0, value=value)
    else:
        config = AC.AlterConfigsResource.AlterableConfig(name=key, value=value)
    resource = AC.AlterConfigsResource(resource_type=resource_type, resource_name=name, configs=[config])
    version = 1 if module is incremental_alter_configs else 2
    (res,) = sec.call(module, version, resources=[resource], validate_only=True).responses
    return res.error_code, res.error_message


@pytest.mark.parametrize("module", [alter_configs, incremental_alter_configs])
def test_altering_configs_needs_alter_configs_on_the_resource(sec, module):
    sec.grant(Op.DESCRIBE_CONFIGS, Rt.TOPIC, "secret")
    sec.grant(Op.DESCRIBE_CONFIGS, Rt.CLUSTER)
    assert alter(sec, module, TOPIC, "secret", "retention.ms", "1000") == (E.TOPIC_AUTHORIZATION_FAILED, None)
    assert alter(sec, module, TOPIC, "missing", "retention.ms", "1000") == (E.TOPIC_AUTHORIZATION_FAILED, None)
    assert alter(sec, module, BROKER, "", "log.retention.ms", "1000") == (E.CLUSTER_AUTHORIZATION_FAILED, None)
    sec.grant(Op.ALTER_CONFIGS, Rt.TOPIC, "secret")
    sec.grant(Op.ALTER_CONFIGS, Rt.CLUSTER)
    assert alter(sec, module, TOPIC, "secret", "retention.ms", "1000") == (E.NONE, None)
    assert alter(sec, module, BROKER, "", "log.retention.ms", "1000") == (E.NONE, None)


# Cluster APIs


def test_describe_log_dirs_needs_describe_on_the_cluster(sec):
    resp = sec.call(describe_log_dirs, 4, topics=None)
    assert (resp.error_code, resp.results) == (E.CLUSTER_AUTHORIZATION_FAILED, [])
    assert sec.call(describe_log_dirs, 1, topics=None).results == []  # before v3 there is no error field
    sec.grant(Op.DESCRIBE, Rt.CLUSTER)
    resp = sec.call(describe_log_dirs, 4, topics=None)
    assert resp.error_code == E.NONE
    assert [t.name for d in resp.results for t in d.topics] == ["secret"]


def test_alter_partition_reassignments_needs_alter_on_the_cluster(sec):
    APR = request_of(alter_partition_reassignments)
    topics = [
        APR.ReassignableTopic(
            name="secret", partitions=[APR.ReassignableTopic.ReassignablePartition(partition_index=0, replicas=[0])]
        )
    ]
    resp = sec.call(alter_partition_reassignments, 0, timeout_ms=1000, topics=topics)
    assert resp.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert [p.error_code for t in resp.responses for p in t.partitions] == [E.CLUSTER_AUTHORIZATION_FAILED]
    sec.grant(Op.DESCRIBE, Rt.CLUSTER)
    assert sec.call(alter_partition_reassignments, 0, timeout_ms=1000, topics=topics).error_code == 31
    sec.grant(Op.ALTER, Rt.CLUSTER)
    resp = sec.call(alter_partition_reassignments, 0, timeout_ms=1000, topics=topics)
    assert resp.error_code == E.NOT_CONTROLLER  # authorized: this broker is no controller


def test_list_partition_reassignments_needs_describe_on_the_cluster(sec):
    LPR = request_of(list_partition_reassignments)
    topics = [LPR.ListPartitionReassignmentsTopics(name="secret", partition_indexes=[0])]
    resp = sec.call(list_partition_reassignments, 0, timeout_ms=1000, topics=topics)
    assert resp.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in resp.topics] == [("secret", [0])]
    sec.grant(Op.DESCRIBE, Rt.CLUSTER)
    assert sec.call(list_partition_reassignments, 0, timeout_ms=1000, topics=topics).error_code == E.NOT_CONTROLLER


def test_controlled_shutdown_needs_cluster_action(sec):
    assert sec.call(controlled_shutdown, 3, broker_id=0, broker_epoch=-1).error_code == E.CLUSTER_AUTHORIZATION_FAILED
    sec.grant(Op.CLUSTER_ACTION, Rt.CLUSTER)
    assert sec.call(controlled_shutdown, 3, broker_id=0, broker_epoch=-1).error_code == E.NOT_CONTROLLER


def test_describe_cluster_needs_no_acl_and_answers_the_cluster_bitfield_when_asked(sec):
    resp = sec.call(describe_cluster, 1, include_cluster_authorized_operations=False, endpoint_type=1)
    assert resp.error_code == E.NONE and [b.broker_id for b in resp.brokers] == [0]
    assert resp.cluster_authorized_operations == NOT_REQUESTED
    resp = sec.call(describe_cluster, 1, include_cluster_authorized_operations=True, endpoint_type=1)
    assert resp.cluster_authorized_operations == 0  # no Describe on the cluster
    sec.grant(Op.ALTER, Rt.CLUSTER)  # Alter implies Describe
    resp = sec.call(describe_cluster, 1, include_cluster_authorized_operations=True, endpoint_type=1)
    assert resp.cluster_authorized_operations == (1 << Op.ALTER) | (1 << Op.DESCRIBE)


class ActiveController:
    is_active = True


def test_describe_user_scram_credentials_needs_describe_on_the_cluster(sec):
    DU = request_of(describe_user_scram_credentials)
    resp = sec.call(describe_user_scram_credentials, 0, users=[DU.UserName(name="alice")])
    assert resp.error_code == E.CLUSTER_AUTHORIZATION_FAILED
    assert [(r.user, r.error_code) for r in resp.results] == [("", E.CLUSTER_AUTHORIZATION_FAILED)]
    sec.grant(Op.DESCRIBE, Rt.CLUSTER)
    resp = sec.call(describe_user_scram_credentials, 0, users=[DU.UserName(name="alice")])
    assert resp.error_code == E.NONE and [r.error_code for r in resp.results] == [E.RESOURCE_NOT_FOUND]


def test_alter_user_scram_credentials_needs_alter_on_the_cluster(tmp_path, registry):
    sec = Secured(tmp_path, registry, controller=ActiveController())
    AU = request_of(alter_user_scram_credentials)
    mech = ScramMechanism.SCRAM_SHA_256
    upsertion = AU.ScramCredentialUpsertion(
        name="alice",
        mechanism=mech.wire_type,
        iterations=4096,
        salt=b"salt",
        salted_password=mech.salted_password("pw", b"salt", 4096),
    )
    resp = sec.call(alter_user_scram_credentials, 0, deletions=[], upsertions=[upsertion])
    assert [(r.user, r.error_code) for r in resp.results] == [("alice", E.CLUSTER_AUTHORIZATION_FAILED)]
    assert mech.mechanism_name not in registry.user_config("alice")
    sec.grant(Op.ALTER, Rt.CLUSTER)
    resp = sec.call(alter_user_scram_credentials, 0, deletions=[], upsertions=[upsertion])
    assert [(r.user, r.error_code) for r in resp.results] == [("alice", E.NONE)]
    assert mech.mechanism_name in registry.user_config("alice")
