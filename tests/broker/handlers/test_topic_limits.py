"""CreateTopics / CreatePartitions are validated before anything is written: the per-request and per-broker
partition limits (``max.partitions.per.request``, ``max.broker.partitions``) and the replication factor (1
only, until replication lands). A refused request creates no directory and no registry node, and
``validate_only`` answers exactly the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker.config import BrokerConfig, ConfigError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..conftest import start_brokers
from ..requests import unique
from ..wire import Wire

K = ApiKey
CT = API_BY_KEY[K.CREATE_TOPICS].Request
CP = API_BY_KEY[K.CREATE_PARTITIONS].Request
MD = API_BY_KEY[K.METADATA].Request
PER_REQUEST = 10


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """Two brokers (ids 0, 1) with a small request limit."""
    brokers = start_brokers(2, tmp_path_factory, max_partitions_per_request=PER_REQUEST)
    yield brokers
    for b in brokers:
        b.stop()


@pytest.fixture
def wire(limited):
    with Wire(limited[0].bootstrap_servers) as w:
        yield w


def topic(name, partitions=1, rf=-1, assignments=()):
    return CT.CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=rf,
        configs=[],
        assignments=[
            CT.CreatableTopic.CreatableReplicaAssignment(partition_index=p, broker_ids=list(r))
            for p, r in enumerate(assignments)
        ],
    )


def create_topics(w, *topics, validate_only=False):
    body = CT(topics=list(topics), timeout_ms=10000, validate_only=validate_only)
    return w.call(K.CREATE_TOPICS, 7, body).topics


def create_partitions(w, name, count, assignments=None, validate_only=False):
    t = CP.CreatePartitionsTopic(
        name=name,
        count=count,
        assignments=None
        if assignments is None
        else [CP.CreatePartitionsTopic.CreatePartitionsAssignment(broker_ids=list(r)) for r in assignments],
    )
    return w.call(K.CREATE_PARTITIONS, 3, topics=[t], timeout_ms=10000, validate_only=validate_only).results[0]


def partitions_of(w, name) -> int | None:
    t = w.call(K.METADATA, 12, topics=[MD.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False).topics[0]
    return None if t.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else len(t.partitions)


def assert_nothing_created(brokers, *names):
    for b in brokers:
        registry_topics = b.broker.registry.topics()
        for name in names:
            assert name not in registry_topics and name not in b.broker.metadata.topics
            for log_dir in b.config.log_dirs:
                assert not list(Path(log_dir).glob(f"{name}-*")), f"directories of {name} in {log_dir}"


@pytest.mark.parametrize("validate_only", [False, True])
def test_a_topic_over_the_request_limit_is_refused_naming_the_setting(wire, limited, validate_only):
    name = unique()
    (res,) = create_topics(wire, topic(name, PER_REQUEST + 1), validate_only=validate_only)
    assert res.error_code == ErrorCode.INVALID_PARTITIONS
    assert f"{PER_REQUEST + 1} new partitions" in res.error_message
    assert f"max.partitions.per.request={PER_REQUEST}" in res.error_message
    assert_nothing_created(limited, name)


@pytest.mark.parametrize("validate_only", [False, True])
def test_a_request_over_the_limit_in_total_creates_none_of_its_topics(wire, limited, validate_only):
    small, large, bad = unique("small"), unique("large"), unique("bad")
    results = create_topics(wire, topic(small, 4), topic(large, 7), topic(bad, 0), validate_only=validate_only)
    assert [r.error_code for r in results] == [ErrorCode.INVALID_PARTITIONS] * 3
    assert "the request asks for 11 new partitions over 2 topics" in results[0].error_message
    assert "max.partitions.per.request=10" in results[1].error_message
    assert_nothing_created(limited, small, large, bad)


def test_the_broker_limit_counts_existing_topics_and_earlier_topics_of_the_request(tmp_path_factory):
    # 8 replicas per broker at most; two brokers share the partitions of a topic evenly
    brokers = start_brokers(2, tmp_path_factory, max_partitions_per_request=10, max_broker_partitions=8)
    try:
        with Wire(brokers[0].bootstrap_servers) as w:
            assert create_topics(w, topic(unique("base"), 10))[0].error_code == 0  # 5 on each broker
            ok, over = unique("ok"), unique("over")
            for validate_only in (True, False):
                results = create_topics(w, topic(ok, 4), topic(over, 4), validate_only=validate_only)
                assert [r.error_code for r in results] == [ErrorCode.NONE, ErrorCode.POLICY_VIOLATION]
                assert "would add 2 partition replicas to broker" in results[1].error_message
                assert "which holds 7 already" in results[1].error_message
                assert "max.broker.partitions=8" in results[1].error_message
            assert partitions_of(w, ok) == 4
            assert_nothing_created(brokers, over)
            # refused on its own too: the broker's metadata (or this broker's reservation) counts `ok`
            assert create_topics(w, topic(unique(), 4))[0].error_code == ErrorCode.POLICY_VIOLATION
            assert create_topics(w, topic(unique(), 2))[0].error_code == ErrorCode.NONE  # 8 on each: the limit
    finally:
        for b in brokers:
            b.stop()


def test_create_partitions_respects_both_limits(tmp_path_factory):
    brokers = start_brokers(1, tmp_path_factory, max_partitions_per_request=5, max_broker_partitions=8)
    try:
        with Wire(brokers[0].bootstrap_servers) as w:
            name = unique()
            assert create_topics(w, topic(name, 2))[0].error_code == 0
            for validate_only in (True, False):
                res = create_partitions(w, name, 8, validate_only=validate_only)  # 6 new > 5
                assert res.error_code == ErrorCode.INVALID_PARTITIONS
                assert "6 new partitions" in res.error_message and "max.partitions.per.request=5" in res.error_message
                res = create_partitions(w, name, 7, validate_only=validate_only)  # 2 + 5 = 7 <= 8
                assert (res.error_code, res.error_message) == (ErrorCode.NONE, None)
            assert partitions_of(w, name) == 7
            res = create_partitions(w, name, 9)  # 7 + 2 > 8
            assert res.error_code == ErrorCode.POLICY_VIOLATION and "max.broker.partitions=8" in res.error_message
            assert partitions_of(w, name) == 7
    finally:
        brokers[0].stop()


def test_auto_creation_is_held_to_the_request_limit(tmp_path_factory):
    brokers = start_brokers(1, tmp_path_factory, num_partitions=4, max_partitions_per_request=10)
    try:
        with Wire(brokers[0].bootstrap_servers) as w:
            names = [unique() for _ in range(3)]  # 12 partitions in one Metadata request
            resp = w.call(
                K.METADATA, 12, topics=[MD.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=True
            )
            assert [t.error_code for t in resp.topics] == [ErrorCode.INVALID_PARTITIONS] * 3
            assert_nothing_created(brokers, *names)
            resp = w.call(
                K.METADATA,
                12,
                topics=[MD.MetadataRequestTopic(name=n) for n in names[:2]],
                allow_auto_topic_creation=True,
            )
            assert [t.error_code for t in resp.topics] == [ErrorCode.NONE] * 2
            assert [len(t.partitions) for t in resp.topics] == [4, 4]
    finally:
        brokers[0].stop()


# -- replication factor: up to the number of live brokers (two here) ----------------------------------------


@pytest.mark.parametrize("validate_only", [False, True])
def test_a_replication_factor_above_the_live_brokers_is_refused_with_the_reason(wire, limited, validate_only):
    name = unique()
    (res,) = create_topics(wire, topic(name, 2, rf=3), validate_only=validate_only)
    assert res.error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert "larger than the number of live brokers (2)" in res.error_message
    assert_nothing_created(limited, name)
    (res,) = create_topics(wire, topic(name, 2, rf=2), validate_only=validate_only)
    assert (res.error_code, res.replication_factor, res.num_partitions) == (0, 2, 2)


def test_an_assignment_with_several_replicas_is_accepted(wire, limited):
    name = unique()
    (res,) = create_topics(wire, topic(name, -1, assignments=[(0, 1, 1), (1, 0, 0)]))
    assert res.error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT and "lists a broker twice" in res.error_message
    assert_nothing_created(limited, name)
    (res,) = create_topics(wire, topic(name, -1, assignments=[(0, 1), (1, 0)]))
    assert res.error_code == 0 and res.replication_factor == 2 and res.num_partitions == 2


def test_create_partitions_accepts_assignments_with_several_replicas(wire):
    name = unique()
    assert create_topics(wire, topic(name, 1))[0].error_code == 0
    res = create_partitions(wire, name, 2, assignments=[(0, 1)], validate_only=True)
    assert res.error_code == 0
    assert partitions_of(wire, name) == 1
    assert create_partitions(wire, name, 2, assignments=[(1, 0)]).error_code == 0
    assert partitions_of(wire, name) == 2


def test_the_default_replication_factor_resolves_to_one(wire):
    (res,) = create_topics(wire, topic(unique(), 3, rf=-1))
    assert res.error_code == 0 and res.replication_factor == 1


def test_replication_factor_settings():
    key = "offsets.topic.replication.factor"
    with pytest.raises(ConfigError, match=rf"{key}=0: must be at least 1"):
        BrokerConfig.from_properties({"broker.id": "1", "zookeeper.connect": "localhost:2181", key: "0"})
    cfg = BrokerConfig.from_properties({"broker.id": "1", "zookeeper.connect": "localhost:2181"})
    assert cfg[key] == 3 and cfg["default.replication.factor"] == 1  # Kafka's defaults
    cfg = BrokerConfig.from_properties(
        {"broker.id": "1", "zookeeper.connect": "localhost:2181", "default.replication.factor": "3"}
    )
    assert cfg["default.replication.factor"] == 3
