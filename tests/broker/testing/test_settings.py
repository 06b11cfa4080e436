"""The pytest plugin's settings: config lines, merge precedence, scopes and cluster sizes (pure)."""

from __future__ import annotations

import pytest

from broker.testing.settings import (
    TEST_DEFAULTS,
    SettingsError,
    broker_config,
    cluster_defaults,
    config_key,
    parse_broker_count,
    parse_config_lines,
    parse_scope,
)


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("log.retention.ms", "log.retention.ms"),
        ("log_retention_ms", "log.retention.ms"),
        ("  num.partitions ", "num.partitions"),
        ("auto.create.topics.enable", "auto.create.topics.enable"),
    ],
)
def test_config_keys_are_dotted_names(key, name):
    assert config_key(key) == name


@pytest.mark.parametrize(
    ("lines", "parsed"),
    [
        (["num.partitions=7"], {"num.partitions": "7"}),
        (["a.b = 1 ", "", "# comment", "c_d=x=y"], {"a.b": "1", "c.d": "x=y"}),
        (["listeners=PLAINTEXT://127.0.0.1:0"], {"listeners": "PLAINTEXT://127.0.0.1:0"}),
        (["x.y=1", "x.y=2"], {"x.y": "2"}),
        (["x.y="], {"x.y": ""}),
    ],
)
def test_config_lines_parse_as_key_value(lines, parsed):
    assert parse_config_lines(lines, source="test") == parsed


@pytest.mark.parametrize("line", ["num.partitions", "=3", "   =x"])
def test_a_config_line_without_a_key_or_equals_sign_names_its_source(line):
    with pytest.raises(SettingsError, match="--kafkalog-broker-config"):
        parse_config_lines([line], source="--kafkalog-broker-config")


def test_later_layers_win_and_values_are_property_strings():
    merged = broker_config(
        TEST_DEFAULTS,
        {"group.initial.rebalance.delay.ms": "50"},
        None,
        {"auto_create_topics_enable": False, "num.partitions": 2},
    )
    assert merged["group.initial.rebalance.delay.ms"] == "50"
    assert merged["auto.create.topics.enable"] == "false"
    assert merged["num.partitions"] == "2"
    assert merged["offsets.topic.num.partitions"] == TEST_DEFAULTS["offsets.topic.num.partitions"]


@pytest.mark.parametrize(("brokers", "rf"), [(1, "1"), (2, "2"), (3, "3"), (5, "3")])
def test_a_cluster_replicates_topics_on_up_to_three_brokers(brokers, rf):
    defaults = cluster_defaults(brokers)
    assert defaults["default.replication.factor"] == rf
    assert defaults["offsets.topic.replication.factor"] == rf
    assert defaults["transaction.state.log.replication.factor"] == rf


@pytest.mark.parametrize(
    ("value", "scope"),
    [(None, "function"), ("", "function"), ("session", "session"), (" Module ", "module"), ("class", "class")],
)
def test_scopes_are_pytests_names(value, scope):
    assert parse_scope(value, source="ini kafkalog_broker_scope", default="function") == scope


def test_an_unknown_scope_names_the_setting():
    with pytest.raises(SettingsError, match=r"ini kafkalog_broker_scope: 'global' is not a pytest scope"):
        parse_scope("global", source="ini kafkalog_broker_scope", default="function")


@pytest.mark.parametrize(("value", "count"), [(None, 3), ("", 3), ("1", 1), (5, 5), (" 2 ", 2)])
def test_cluster_sizes(value, count):
    assert parse_broker_count(value, source="ini kafkalog_cluster_brokers") == count


@pytest.mark.parametrize(("value", "message"), [("0", "at least one broker"), ("three", "not a number")])
def test_a_bad_cluster_size_names_the_setting(value, message):
    with pytest.raises(SettingsError, match=f"--kafkalog-cluster-brokers: .*{message}"):
        parse_broker_count(value, source="--kafkalog-cluster-brokers")
