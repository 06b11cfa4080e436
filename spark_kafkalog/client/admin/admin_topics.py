"""Topic descriptions for ``AdminClient`` through DescribeTopicPartitions (key 75, v0, KIP-966), as Kafka 4.x's
admin client describes topics: pages of at most ``partition_limit`` partitions (the broker caps it with
``max.request.partition.size.limit``), each page resumed from the previous answer's ``next_cursor`` until it is
null. An empty name list asks for every topic the principal may describe. Any broker answers; a broker that does
not serve the API raises ``NoCommonVersionError`` (the caller may fall back to Metadata). Thread-safe like
``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.metadata import PartitionInfo
from spark_kafkalog.client.types import PartitionDescription, TopicDescription
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = ["DESCRIBE_TOPIC_PARTITIONS", "describe_topic_partitions", "describe_topic_partitions_steps"]

DESCRIBE_TOPIC_PARTITIONS = int(ApiKey.DESCRIBE_TOPIC_PARTITIONS)
MAX_PAGES = 100_000  # a broker whose cursor never ends is a bug, not a reason to loop forever

AnyBrokerRequest = Callable[..., tuple[int, Any, Any]]
"""``AdminClient._any_broker_send``: (api key, build(version), what=) -> (version, response, None)."""


def describe_topic_partitions(
    send: AnyBrokerRequest, names: Sequence[str] | None, partition_limit: int
) -> tuple[dict[str, TopicDescription], dict[str, KafkaClientError]]:
    """``describe_topic_partitions_steps`` driven by the blocking ``send``."""
    return drive(describe_topic_partitions_steps(names, partition_limit), send)


def describe_topic_partitions_steps(
    names: Sequence[str] | None, partition_limit: int
) -> AdminSteps[tuple[dict[str, TopicDescription], dict[str, KafkaClientError]]]:
    """Every partition of ``names`` (all describable topics when None), page by page; returns the descriptions
    by topic (in the broker's order: by name) and the topics that failed with their errors."""
    R = API_BY_KEY[DESCRIBE_TOPIC_PARTITIONS].Request
    requested = [R.TopicRequest(name=n) for n in dict.fromkeys(names or ())]
    parts: dict[str, list[PartitionDescription]] = {}
    heads: dict[str, Any] = {}
    errors: dict[str, KafkaClientError] = {}
    cursor = None
    for _ in range(MAX_PAGES):
        body = R(topics=requested, response_partition_limit=partition_limit, cursor=cursor)
        _, response, _ = yield AdminRequest(DESCRIBE_TOPIC_PARTITIONS, fixed(body), "DescribeTopicPartitions")
        for t in response.topics:
            if t.error_code:
                errors[t.name] = error_for_code(t.error_code, "DescribeTopicPartitions", topic=t.name)
                continue
            heads[t.name] = t
            # PartitionDescription has PartitionInfo's fields, in the same order
            parts.setdefault(t.name, []).extend(PartitionDescription(*PartitionInfo.from_wire(p)) for p in t.partitions)
        nxt = response.next_cursor
        if nxt is None:
            break
        cursor = R.Cursor(topic_name=nxt.topic_name, partition_index=nxt.partition_index)
    else:
        raise KafkaClientError(f"DescribeTopicPartitions: the broker's cursor did not end after {MAX_PAGES} pages")
    out = {
        name: TopicDescription(
            name,
            tuple(sorted(parts[name], key=lambda p: p.partition)),
            t.is_internal,
            str(t.topic_id),
        )
        for name, t in heads.items()
    }
    return out, errors
