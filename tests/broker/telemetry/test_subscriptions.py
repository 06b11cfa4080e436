"""Client metrics subscriptions: config checks, client matching and the subscription id (golden values computed
with Apache Kafka 4.4's own ``Crc32C`` and ``Uuid`` classes and ``HashSet.toString``, as its
``ClientMetricsManager.computeSubscriptionId`` does)."""

from __future__ import annotations

import uuid

import pytest

from broker.telemetry.subscriptions import (
    ClientInstanceMetadata,
    InvalidSubscriptionError,
    java_hash_set_order,
    java_uuid_hash,
    parse_subscription,
    resolve,
    subscription_id,
)
from spark_kafkalog.protocol import ErrorCode

INSTANCE = uuid.UUID(int=(0x0123456789ABCDEF << 64) | 0x1122334455667788)  # Kafka: ASNFZ4mrze8RIjNEVWZ3iA

CLIENT = ClientInstanceMetadata(
    client_instance_id="ASNFZ4mrze8RIjNEVWZ3iA",
    client_id="orders-producer-1",
    client_software_name="apache-kafka-java",
    client_software_version="4.4.0",
    client_source_address="10.0.0.7",
    client_source_port="53122",
)


@pytest.mark.parametrize(
    "match, matches",
    [
        ("", True),
        ("client_id=orders-.*", True),
        ("client_id=orders", False),  # the whole value must match
        ("client_id=.*producer.*", True),
        ("client_software_name=apache-kafka-java, client_software_version=4\\..*", True),
        ("client_software_name=apache-kafka-java, client_software_version=3\\..*", False),
        ("client_software_name=librdkafka", False),
        ("client_source_address=10\\.0\\.0\\.\\d+", True),
        ("client_source_port=53122", True),
        ("client_instance_id=ASNFZ4mrze8RIjNEVWZ3iA", True),
        ("client_instance_id=AAAA.*", False),
        (" client_id = orders-producer-1 ", True),  # Kafka trims both sides
    ],
)
def test_a_subscription_matches_a_client_when_every_pattern_matches_the_whole_attribute(match, matches):
    sub = parse_subscription("s", {"metrics": "*", "match": match})
    assert CLIENT.matches(sub) is matches


def test_a_pattern_on_an_attribute_the_client_did_not_send_matches_nothing():
    anonymous = ClientInstanceMetadata("x", None, None, None, "127.0.0.1", "1")
    assert not anonymous.matches(parse_subscription("s", {"match": "client_software_name=.*"}))
    assert anonymous.matches(parse_subscription("s", {"match": "client_source_address=127.0.0.1"}))


@pytest.mark.parametrize(
    "name, config, code, message",
    [
        ("", {"metrics": "*"}, ErrorCode.INVALID_REQUEST, "Subscription name can't be empty"),
        ("s", {"metric": "*"}, ErrorCode.INVALID_REQUEST, "Unknown client metrics configuration: metric"),
        ("s", {"interval.ms": "99"}, ErrorCode.INVALID_REQUEST, "interval must be between 100 and 3600000"),
        ("s", {"interval.ms": "3600001"}, ErrorCode.INVALID_REQUEST, "interval must be between 100 and 3600000"),
        ("s", {"interval.ms": "soon"}, ErrorCode.INVALID_CONFIG, "Not a number"),
        ("s", {"match": "client_id"}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern: client_id"),
        ("s", {"match": "a=b=c"}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern"),
        ("s", {"match": "client_rack=a"}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern"),
        ("s", {"match": "client_id=(open"}, ErrorCode.INVALID_CONFIG, "Illegal client matching pattern"),
    ],
)
def test_configs_kafka_refuses_are_refused_with_its_error(name, config, code, message):
    with pytest.raises(InvalidSubscriptionError, match=message.replace("(", r"\(")) as info:
        parse_subscription(name, config)
    assert info.value.code == code


@pytest.mark.parametrize(
    "config, metrics, interval",
    [
        ({}, (), 300000),
        (
            {"metrics": "org.apache.kafka.producer., org.apache.kafka.consumer."},
            ("org.apache.kafka.producer.", "org.apache.kafka.consumer."),
            300000,
        ),
        ({"metrics": "*", "interval.ms": "100"}, ("*",), 100),
        ({"metrics": "", "interval.ms": "3600000"}, (), 3600000),
    ],
)
def test_keys_parse_with_kafkas_defaults(config, metrics, interval):
    sub = parse_subscription("s", config)
    assert (sub.metrics, sub.interval_ms) == (metrics, interval)


def _subs(*configs):
    return [parse_subscription(f"s{i}", c) for i, c in enumerate(configs)]


@pytest.mark.parametrize(
    "configs, metrics, interval",
    [
        ([], (), 300000),
        ([{"metrics": "org.apache.kafka.producer.", "interval.ms": "5000", "match": "client_id=other"}], (), 300000),
        (
            [
                {"metrics": "org.apache.kafka.producer.", "interval.ms": "5000"},
                {
                    "metrics": "org.apache.kafka.client.",
                    "interval.ms": "2000",
                    "match": "client_software_name=apache.*",
                },
            ],
            ("org.apache.kafka.producer.", "org.apache.kafka.client."),
            2000,
        ),
        (
            [
                {"metrics": "org.apache.kafka.producer.", "interval.ms": "5000"},
                {"metrics": "*", "interval.ms": "60000"},
            ],
            ("*",),
            5000,
        ),
    ],
)
def test_a_client_gets_the_union_of_the_matching_subscriptions_at_the_shortest_interval(configs, metrics, interval):
    resolved = resolve(_subs(*configs), CLIENT, INSTANCE)
    assert set(resolved.metrics) == set(metrics) and resolved.interval_ms == interval
    assert resolved.subscription_id == subscription_id(resolved.metrics, interval, INSTANCE)


def test_uuid_hash_is_kafkas():
    assert java_uuid_hash(INSTANCE) == -858993596 & 0xFFFFFFFF
    assert java_uuid_hash(uuid.UUID(int=1)) == 1


@pytest.mark.parametrize(
    "metrics, interval, instance, expected",
    [
        ([], 300000, INSTANCE, 403412890),
        (["*"], 1000, INSTANCE, -28868867),
        (
            ["org.apache.kafka.producer.", "org.apache.kafka.consumer.fetch.", "org.apache.kafka.client.", "a", "zz"],
            5000,
            INSTANCE,
            -1599930392,
        ),
        ([f"org.apache.kafka.m{i}." for i in range(20)], 100, INSTANCE, -2017047512),  # a table of 32 buckets
        (["org.apache.kafka.producer."], 300000, uuid.UUID(int=1), -592968416),
    ],
)
def test_subscription_id_is_the_one_kafka_computes(metrics, interval, instance, expected):
    assert subscription_id(java_hash_set_order(metrics), interval, instance) == expected


def test_hash_set_order_is_javas():
    # Kafka 4.4's HashSet.toString of these five, added in this order
    assert java_hash_set_order(
        ["org.apache.kafka.producer.", "org.apache.kafka.consumer.fetch.", "org.apache.kafka.client.", "a", "zz"]
    ) == ("org.apache.kafka.producer.", "zz", "a", "org.apache.kafka.client.", "org.apache.kafka.consumer.fetch.")


def test_the_subscription_id_changes_with_the_metrics_the_interval_and_the_instance():
    base = subscription_id(("a.",), 1000, INSTANCE)
    assert base != subscription_id(("b.",), 1000, INSTANCE)
    assert base != subscription_id(("a.",), 1001, INSTANCE)
    assert base != subscription_id(("a.",), 1000, uuid.UUID(int=5))
    assert -(2**31) <= base < 2**31


@pytest.mark.parametrize("n, expected", [(12, 910993290), (24, 264761662), (40, -1397434929)])
def test_one_subscriptions_id_is_kafkas_whatever_its_size(n, expected):
    # Kafka 4.4: target = new HashSet<>(); target.addAll(new HashSet<>(list)); the id of target at 1000 ms
    prefixes = [f"org.apache.kafka.p{n * 7 + i}." for i in range(n)]
    sub = parse_subscription("s", {"metrics": ",".join(prefixes), "interval.ms": "1000"})
    assert resolve([sub], CLIENT, INSTANCE).subscription_id == expected
