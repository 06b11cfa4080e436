"""ShareConsumer's settings and misuse, without a broker: the acknowledgement mode, the group id, the settings a share
consumer refuses (naming why), and calls refused before anything is sent."""

from __future__ import annotations

import pytest

from spark_kafkalog.client import AcknowledgeType, ClientConfig, ConfigError, KafkaClientError, ShareConsumer

BOOTSTRAP = "127.0.0.1:1"  # never connected to by these tests


@pytest.mark.parametrize(
    "kwargs, mode",
    [
        ({}, "implicit"),
        ({"acknowledgement_mode": "explicit"}, "explicit"),
        ({"share_acknowledgement_mode": "EXPLICIT"}, "explicit"),
        ({"config": {"share.acknowledgement.mode": "explicit"}}, "explicit"),
    ],
)
def test_the_acknowledgement_mode_comes_from_the_keyword_or_kafkas_setting(kwargs, mode):
    with ShareConsumer(BOOTSTRAP, "g", **kwargs) as consumer:
        assert consumer.acknowledgement_mode == mode


def test_settings_as_one_mapping_or_a_client_config():
    with ShareConsumer(
        {"bootstrap.servers": BOOTSTRAP, "group.id": "g", "share.acknowledgement.mode": "explicit"}
    ) as c:
        assert (c.group_id, c.acknowledgement_mode) == ("g", "explicit")
    with ShareConsumer(ClientConfig.create(bootstrap_servers=BOOTSTRAP), group_id="g2", max_poll_records=7) as c:
        assert (c.group_id, c.config.max_poll_records) == ("g2", 7)


def test_an_unknown_mode_is_refused():
    with pytest.raises(ConfigError, match="'implicit' or 'explicit', got 'sometimes'"):
        ShareConsumer(BOOTSTRAP, "g", acknowledgement_mode="sometimes")


def test_a_group_id_is_required():
    with pytest.raises(ConfigError, match="needs a group id"):
        ShareConsumer(BOOTSTRAP)


@pytest.mark.parametrize(
    "setting, why",
    [
        ({"auto_offset_reset": "earliest"}, "share.auto.offset.reset"),
        ({"enable_auto_commit": False}, "commits no offsets"),
        ({"group_instance_id": "i1"}, "no static members"),
        ({"isolation_level": "read_committed"}, "share.isolation.level"),
        ({"group_protocol": "consumer"}, "share group protocol"),
    ],
)
def test_settings_meaningless_to_a_share_group_are_refused_with_the_reason(setting, why):
    key = next(iter(setting)).replace("_", ".")
    with pytest.raises(ConfigError, match=f"'{key}' is not supported by a share consumer: .*{why}"):
        ShareConsumer(BOOTSTRAP, "g", **setting)


def test_poll_needs_a_subscription_and_acknowledge_needs_explicit_mode():
    with ShareConsumer(BOOTSTRAP, "g") as consumer:
        assert consumer.subscription() == set()
        with pytest.raises(KafkaClientError, match="subscribe"):
            consumer.poll(0)
        with pytest.raises(KafkaClientError, match="acknowledgement_mode='explicit'"):
            consumer.acknowledge(("t", 0, 1))


def test_acknowledging_what_no_poll_returned_is_refused():
    with ShareConsumer(BOOTSTRAP, "g", acknowledgement_mode="explicit") as consumer:
        with pytest.raises(KafkaClientError, match="t-0 at offset 5 cannot be acknowledged"):
            consumer.acknowledge(("t", 0, 5), AcknowledgeType.REJECT)
        with pytest.raises(KafkaClientError, match=r"ConsumerRecord or \(topic, partition, offset\)"):
            consumer.acknowledge("t-0-5")  # type: ignore[arg-type]


def test_a_closed_consumer_refuses_calls_and_closes_once():
    consumer = ShareConsumer(BOOTSTRAP, "g")
    consumer.close()
    consumer.close()
    with pytest.raises(KafkaClientError, match="closed"):
        consumer.subscribe(["t"])


def test_member_ids_differ_per_consumer():
    with ShareConsumer(BOOTSTRAP, "g") as a, ShareConsumer(BOOTSTRAP, "g") as b:
        assert a.member_id != b.member_id and len(a.member_id) == 22
