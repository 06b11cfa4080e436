"""Kafka's znode layout: paths and node encodings, byte for byte as Kafka writes them (pure: no ZooKeeper)."""

from __future__ import annotations

import json

import pytest

from broker.cluster import zk_layout as zl


def test_paths_follow_kafkas_zookeeper_layout():
    assert zl.broker_path(3) == "/brokers/ids/3"
    assert zl.topic_path("orders") == "/brokers/topics/orders"
    assert zl.partitions_path("orders") == "/brokers/topics/orders/partitions"
    assert zl.partition_path("orders", 2) == "/brokers/topics/orders/partitions/2"
    assert zl.partition_state_path("orders", 2) == "/brokers/topics/orders/partitions/2/state"
    assert zl.topic_config_path("orders") == "/config/topics/orders"
    assert zl.deletion_path("orders") == "/admin/delete_topics/orders"
    assert zl.consumer_offset_path("g", "orders", 5) == "/consumers/g/offsets/orders/5"
    assert (zl.CONTROLLER, zl.CONTROLLER_EPOCH, zl.CLUSTER_ID) == ("/controller", "/controller_epoch", "/cluster/id")
    assert zl.CONFIG_CHANGE_PREFIX == "/config/changes/config_change_"
    assert {
        "/brokers/ids",
        "/brokers/topics",
        "/config/topics",
        "/config/changes",
        "/admin/delete_topics",
        "/consumers",
        "/cluster",
    } <= set(zl.PERSISTENT_PATHS)


@pytest.mark.parametrize("partition", [-1, "0", 1.0, True, None])
def test_partition_paths_refuse_anything_but_a_non_negative_int(partition):
    with pytest.raises(ValueError, match="partition must be a non-negative int"):
        zl.partition_state_path("t", partition)


@pytest.mark.parametrize("group", ["", "a/b", ".", "..", None])
def test_consumer_offset_paths_refuse_groups_that_are_not_one_path_component(group):
    with pytest.raises(ValueError, match="invalid consumer group name"):
        zl.consumer_offset_path(group, "t", 0)


def test_consumer_offset_paths_check_the_topic_name():
    with pytest.raises(ValueError, match="invalid topic name"):
        zl.consumer_offset_path("g", "a/b", 0)


def test_cluster_id_node():
    data = zl.encode_cluster_id("NpnrT6BOTomI-wMoIvZGxQ")
    assert data == b'{"version":"1","id":"NpnrT6BOTomI-wMoIvZGxQ"}'
    assert zl.decode_cluster_id(data) == "NpnrT6BOTomI-wMoIvZGxQ"
    with pytest.raises(ValueError, match="/kafka/cluster/id: malformed cluster id node"):
        zl.decode_cluster_id(b'{"version":"1"}', what="/kafka/cluster/id")


def test_controller_node_is_json_and_the_pre_0_8_2_bare_id_is_read_too():
    data = zl.encode_controller(7, timestamp_ms=1528150180386)
    assert data == b'{"version":1,"brokerid":7,"timestamp":"1528150180386"}'
    assert zl.decode_controller(data) == 7
    assert zl.decode_controller(b"3") == 3
    fresh = json.loads(zl.encode_controller(1))
    assert fresh["timestamp"].isdigit() and int(fresh["timestamp"]) > 1_500_000_000_000
    with pytest.raises(ValueError, match="/controller: malformed controller node"):
        zl.decode_controller(b'{"version":1}')


def test_controller_epoch_is_a_decimal_and_an_empty_node_counts_as_zero():
    assert zl.encode_controller_epoch(12) == b"12"
    assert zl.decode_controller_epoch(b"12") == 12
    assert zl.decode_controller_epoch(b"") == 0 and zl.decode_controller_epoch(None) == 0
    with pytest.raises(ValueError, match="/controller_epoch: malformed controller epoch"):
        zl.decode_controller_epoch(b"x")


def test_topic_config_node_holds_every_value_as_a_string():
    data = zl.encode_topic_config({"retention.ms": 1000, "cleanup.policy": "compact"})
    assert data == b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    assert zl.decode_topic_config("t", data) == {"retention.ms": "1000", "cleanup.policy": "compact"}
    assert zl.decode_topic_config("t", zl.encode_topic_config({})) == {}
    for bad in (b"not json", b"[]", b'{"version":1}', b'{"config":[1]}'):
        with pytest.raises(ValueError, match="/config/topics/t: malformed config node"):
            zl.decode_topic_config("t", bad)


def test_config_change_notification_names_the_topic_entity():
    assert zl.encode_config_change("orders") == b'{"version":2,"entity_path":"topics/orders"}'


def test_consumer_offset_node_is_a_decimal():
    assert zl.encode_offset(42) == b"42"
    assert zl.decode_offset(b"42") == 42
    with pytest.raises(ValueError, match="/consumers/g/offsets/t/0: malformed offset"):
        zl.decode_offset(b"forty-two", what="/consumers/g/offsets/t/0")
