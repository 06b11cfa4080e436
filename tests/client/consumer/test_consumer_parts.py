"""consumer_parts' subscribe check and committed-offset merge, shared by Consumer and AIOConsumer (pure)."""

from __future__ import annotations

import pytest

from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.consumer.consumer_parts import check_can_subscribe, merge_committed, offset_stores
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition


@pytest.mark.parametrize(
    ("group_id", "subscribed", "assigned", "refusal"),
    [
        ("g", False, False, None),
        ("g", True, True, None),  # a member's assignment: subscribing again replaces the subscription
        (None, False, False, "needs a group.id"),
        ("g", False, True, "mutually exclusive"),
    ],
)
def test_check_can_subscribe(group_id: str | None, subscribed: bool, assigned: bool, refusal: str | None) -> None:
    if refusal is None:
        check_can_subscribe(group_id, subscribed, assigned)
        return
    with pytest.raises(KafkaClientError, match=refusal) as raised:
        check_can_subscribe(group_id, subscribed, assigned)
    assert not raised.value.retriable


@pytest.mark.parametrize(
    ("settings", "stores"),
    [
        ({}, ["kafka"]),
        ({"offsets.storage": "zookeeper"}, ["zookeeper"]),
        ({"offsets.storage": "zookeeper", "dual.commit.enabled": True}, ["kafka", "zookeeper"]),
    ],
)
def test_offset_stores(settings: dict[str, object], stores: list[str]) -> None:
    assert offset_stores(ClientConfig.create({"bootstrap.servers": "h:9092", **settings})) == stores


def test_merge_committed_keeps_the_larger_offset() -> None:
    a, b, c = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    found = {a: OffsetAndMetadata(10), b: OffsetAndMetadata(5)}
    merge_committed(found, {a: OffsetAndMetadata(7), b: OffsetAndMetadata(8, "m"), c: OffsetAndMetadata(1)})
    assert found == {a: OffsetAndMetadata(10), b: OffsetAndMetadata(8, "m"), c: OffsetAndMetadata(1)}
