"""DeleteRecords for ``AdminClient.delete_records``: each partition's request goes to its leader.

``delete_records(client, {tp: offset}, timeout_ms)`` groups the partitions by leader (one DeleteRecords v0+ per
leader, ``offset`` -1 meaning the high watermark), sends again, within the client's retry plan, the partitions
that failed retriably (a partition error also invalidates its topic's metadata, so its leader is looked up again)
and returns ``(new log start offsets, errors)``, each keyed by ``TopicPartition``; a request that fails for
good (a non-retriable ``KafkaClientError``) raises. Thread-safe like
``KafkaClient``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

if TYPE_CHECKING:
    from spark_kafkalog.client.core.client import KafkaClient

__all__ = ["delete_records"]

_DELETE_RECORDS = int(ApiKey.DELETE_RECORDS)


def delete_records(
    client: KafkaClient, offsets: Mapping[TopicPartition, int], timeout: int
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, KafkaClientError]]:
    """Delete the records below ``{tp: offset}``: ``(low watermark by partition, error by failed partition)``;
    ``timeout`` (ms) is the brokers' wait for the followers."""
    R = API_BY_KEY[_DELETE_RECORDS].Request
    remaining = {TopicPartition(*tp): off for tp, off in offsets.items()}
    result: dict[TopicPartition, int] = {}
    errors: dict[TopicPartition, KafkaClientError] = {}
    plan = client.retry_plan()
    while remaining:
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        for tp, off in remaining.items():
            by_leader.setdefault(client.leader_for(tp), {})[tp] = off
        retry: dict[TopicPartition, int] = {}
        for leader, part in by_leader.items():
            by_topic: dict[str, list[Any]] = {}
            for tp, off in part.items():
                by_topic.setdefault(tp.topic, []).append(
                    R.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=tp.partition, offset=off)
                )
            body = R(
                topics=[R.DeleteRecordsTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
                timeout_ms=timeout,
            )
            try:
                _, response = client.send_request(
                    _DELETE_RECORDS, body, node_id=leader, timeout_ms=timeout + client.config.request_timeout_ms
                )
            except KafkaClientError as e:
                if not e.retriable:
                    raise
                retry.update(part)
                continue
            peer = str(client.broker_address(leader) or leader)
            for topic in response.topics:
                for p in topic.partitions:
                    tp = TopicPartition(topic.name, p.partition_index)
                    if not p.error_code:
                        result[tp] = p.low_watermark
                        continue
                    error = error_for_code(
                        p.error_code, "DeleteRecords", broker=peer, topic=tp.topic, partition=tp.partition
                    )
                    if error.retriable and tp in part:
                        client.metadata.invalidate(tp.topic)
                        retry[tp] = part[tp]
                    else:
                        errors[tp] = error
        remaining = retry
        if remaining and not plan.sleep_or_give_up():
            for tp in remaining:
                errors[tp] = KafkaClientError(
                    f"DeleteRecords for {tp} did not succeed in time",
                    retriable=True,
                    topic=tp.topic,
                    partition=tp.partition,
                )
            break
    return result, errors
