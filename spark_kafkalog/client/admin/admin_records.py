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
    from spark_kafkalog.client.metadata import MetadataCache

__all__ = ["collect_delete_records", "delete_records", "delete_records_request", "timed_out"]

_DELETE_RECORDS = int(ApiKey.DELETE_RECORDS)


def delete_records(
    client: KafkaClient, offsets: Mapping[TopicPartition, int], timeout: int
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, KafkaClientError]]:
    """Delete the records below ``{tp: offset}``: ``(low watermark by partition, error by failed partition)``;
    ``timeout`` (ms) is the brokers' wait for the followers."""
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
            body = delete_records_request(part, timeout)
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
            collect_delete_records(response, part, peer, result, errors, retry, client.metadata)
        remaining = retry
        if remaining and not plan.sleep_or_give_up():
            errors.update(timed_out(remaining))
            break
    return result, errors


def delete_records_request(part: Mapping[TopicPartition, int], timeout: int) -> Any:
    """The DeleteRecords body (any version) for one leader's ``{tp: offset}``."""
    R = API_BY_KEY[_DELETE_RECORDS].Request
    by_topic: dict[str, list[Any]] = {}
    for tp, off in part.items():
        by_topic.setdefault(tp.topic, []).append(
            R.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=tp.partition, offset=off)
        )
    return R(topics=[R.DeleteRecordsTopic(name=t, partitions=ps) for t, ps in by_topic.items()], timeout_ms=timeout)


def collect_delete_records(
    response: Any,
    part: Mapping[TopicPartition, int],
    peer: str,
    result: dict[TopicPartition, int],
    errors: dict[TopicPartition, KafkaClientError],
    retry: dict[TopicPartition, int],
    metadata: MetadataCache,
) -> None:
    """Sort one leader's answer to ``part``: low watermarks into ``result``, retriable partition errors into
    ``retry`` (their topic's metadata invalidated, so the leader is looked up again), the others into ``errors``."""
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            if not p.error_code:
                result[tp] = p.low_watermark
                continue
            error = error_for_code(p.error_code, "DeleteRecords", broker=peer, topic=tp.topic, partition=tp.partition)
            if error.retriable and tp in part:
                metadata.invalidate(tp.topic)
                retry[tp] = part[tp]
            else:
                errors[tp] = error


def timed_out(remaining: Mapping[TopicPartition, int]) -> dict[TopicPartition, KafkaClientError]:
    """The errors of the partitions still failing when the retries ran out."""
    return {
        tp: KafkaClientError(
            f"DeleteRecords for {tp} did not succeed in time", retriable=True, topic=tp.topic, partition=tp.partition
        )
        for tp in remaining
    }
