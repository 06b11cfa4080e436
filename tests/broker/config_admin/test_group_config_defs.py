"""Group configs are validated as Kafka 4.4's ``GroupConfig.validate`` does (the messages below are the ones
Kafka 4.4 gives for the same values), and a group's values are its overrides over the broker defaults."""

from __future__ import annotations

import pytest

from broker.config import BrokerConfig, ConfigError
from broker.config_admin.group_config_defs import (
    default_group_config,
    effective_group_config,
    parse_duration_ms,
    validate_group_config,
)


def broker_config(**extra: str) -> BrokerConfig:
    props = {"broker.id": "0", "log.dirs": "/tmp/x", "zookeeper.connect": "memory:defs"}
    return BrokerConfig.from_properties(props | {k.replace("_", "."): v for k, v in extra.items()})


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"foo.bar": "1"}, "Unknown group config name: foo.bar"),
        (
            {"share.record.lock.duration.ms": "999"},
            "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000",
        ),
        (
            {"share.record.lock.duration.ms": "100000000"},
            "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive.",
        ),
        (
            {"share.record.lock.duration.ms": "abc"},
            "Invalid value abc for configuration share.record.lock.duration.ms: Not a number of type INT",
        ),
        (
            {"share.delivery.count.limit": "1"},
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2",
        ),
        ({"share.delivery.count.limit": "11"}, "share.delivery.count.limit must be in the range 2 to 10 inclusive."),
        (
            {"share.delivery.count.limit": ""},
            "Invalid value  for configuration share.delivery.count.limit: Not a number of type INT",
        ),
        (
            {"share.delivery.count.limit": "99999999999"},
            "Invalid value 99999999999 for configuration share.delivery.count.limit: Not a number of type INT",
        ),
        (
            {"share.isolation.level": "READ_COMMITTED"},
            "Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of: "
            "read_committed, read_uncommitted",
        ),
        (
            {"share.session.timeout.ms": "1000"},
            "share.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            {"share.heartbeat.interval.ms": "20000"},
            "share.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            {"consumer.session.timeout.ms": "5000"},
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            {"consumer.heartbeat.interval.ms": "100"},
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
    ]
    + [
        (
            {"share.auto.offset.reset": value},
            f"Invalid value {value} for configuration share.auto.offset.reset: Invalid value `{value}` for "
            "configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
            "'by_duration:<PnDTnHnMn.nS>'.",
        )
        for value in (
            "LATEST",
            "foo",
            "by_duration:",
            "by_duration:xx",
            "by_duration:-PT1H",
            "by_duration:PT-1H",
            "by_duration: PT1H",
            "by_duration:P1W",
            "by_duration:P1DT",
        )
    ],
)
def test_invalid_group_configs_are_refused_with_kafkas_messages(overrides, message):
    with pytest.raises(ConfigError) as e:
        validate_group_config(overrides, broker_config())
    assert str(e.value) == message


@pytest.mark.parametrize(
    "overrides, typed",
    [
        ({"share.auto.offset.reset": "by_duration:PT1H"}, {"share.auto.offset.reset": "by_duration:PT1H"}),
        ({"share.auto.offset.reset": "by_duration:pt1h"}, {"share.auto.offset.reset": "by_duration:pt1h"}),
        (
            {"share.auto.offset.reset": "by_duration:P1DT2H3M4.5S"},
            {"share.auto.offset.reset": "by_duration:P1DT2H3M4.5S"},
        ),
        ({"share.auto.offset.reset": " earliest"}, {"share.auto.offset.reset": "earliest"}),
        ({"share.delivery.count.limit": " 10 "}, {"share.delivery.count.limit": 10}),
        ({"share.isolation.level": "read_committed"}, {"share.isolation.level": "read_committed"}),
        ({"share.record.lock.duration.ms": "15000"}, {"share.record.lock.duration.ms": 15000}),
        ({}, {}),
    ],
)
def test_valid_group_configs_are_accepted_typed(overrides, typed):
    assert validate_group_config(overrides, broker_config()) == typed


def test_the_broker_bounds_decide_the_ranges_and_a_session_must_outlast_its_heartbeat():
    cfg = broker_config(
        **{
            "group.share.min.session.timeout.ms": "1000",
            "group.share.min.heartbeat.interval.ms": "1000",
            "group.share.max.heartbeat.interval.ms": "60000",
        }
    )
    assert validate_group_config({"share.session.timeout.ms": "6000"}, cfg) == {"share.session.timeout.ms": 6000}
    for heartbeat in ("6000", "10000"):
        with pytest.raises(ConfigError, match="^share.session.timeout.ms must be greater than share.heartbeat"):
            validate_group_config({"share.session.timeout.ms": "6000", "share.heartbeat.interval.ms": heartbeat}, cfg)


@pytest.mark.parametrize(
    "text, ms",
    [
        ("PT1H", 3_600_000),
        ("P1D", 86_400_000),
        ("P1DT2H3M4.5S", 93_784_500),
        ("pt0s", 0),
        ("PT-0.5S", -500),
        ("-PT1M", -60_000),
        ("PT1H-30M", 1_800_000),
        ("P", None),
        ("PT", None),
        ("P1DT", None),
        ("1H", None),
        ("P1W", None),
    ],
)
def test_durations_parse_as_javas_duration_parse(text, ms):
    assert parse_duration_ms(text) == ms


def test_a_groups_values_are_its_overrides_over_the_broker_defaults_clamped_into_the_bounds():
    cfg = broker_config(**{"group.share.record.lock.duration.ms": "20000", "group.share.delivery.count.limit": "4"})
    assert default_group_config(cfg) == {
        "consumer.session.timeout.ms": 45000,
        "consumer.heartbeat.interval.ms": 5000,
        "share.session.timeout.ms": 45000,
        "share.heartbeat.interval.ms": 5000,
        "share.record.lock.duration.ms": 20000,
        "share.delivery.count.limit": 4,
        "share.auto.offset.reset": "latest",
        "share.isolation.level": "read_uncommitted",
    }
    values = effective_group_config(
        {
            "share.auto.offset.reset": "earliest",
            "share.record.lock.duration.ms": "3600000",  # stored under wider bounds: clamped
            "share.delivery.count.limit": "many",  # unparsable: the default
            "not.a.group.config": "1",
        },
        cfg,
    )
    assert values["share.auto.offset.reset"] == "earliest"
    assert values["share.record.lock.duration.ms"] == 60000
    assert values["share.delivery.count.limit"] == 4
    assert "not.a.group.config" not in values
