"""DeleteRecords for ``AdminClient.delete_records``: each partition's request goes to its leader.

``delete_records(client, {tp: offset}, timeout_ms)`` groups the partitions by leader (one DeleteRecords v0+ per
leader, ``offset`` -1 meaning the high watermark), sends again, within the client's retry plan, the partitions
that failed retriably (a partition error also invalidates its topic's metadata, so its leader is looked up again)
and returns ``(new log start offsets, errors)``, each keyed by ``TopicPartition``; a request that fails for
good (a non-retriable ``KafkaClientError``) raises. Thread-safe like
``KafkaClient``.

``DeleteRecordsRounds`` is the bookkeeping of those rounds without I/O (what is left, what succeeded, what failed,
what is sent again), shared by ``delete_records`` and the asyncio ``AIOAdminClient.delete_records``: the drivers
only look up leaders, send and sleep.
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

__all__ = ["DeleteRecordsRounds", "collect_delete_records", "delete_records", "delete_records_request", "timed_out"]

_DELETE_RECORDS = int(ApiKey.DELETE_RECORDS)


def delete_records(
    client: KafkaClient, offsets: Mapping[TopicPartition, int], timeout: int
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, KafkaClientError]]:
    """Delete the records below ``{tp: offset}``: ``(low watermark by partition, error by failed partition)``;
    ``timeout`` (ms) is the brokers' wait for the followers."""
    rounds = DeleteRecordsRounds(offsets)
    plan = client.retry_plan()
    while rounds.remaining:
        leaders = {tp: client.leader_for(tp) for tp in rounds.remaining}
        for leader, part in rounds.by_leader(leaders).items():
            body = delete_records_request(part, timeout)
            try:
                _, response = client.send_request(
                    _DELETE_RECORDS, body, node_id=leader, timeout_ms=timeout + client.config.request_timeout_ms
                )
            except KafkaClientError as e:
                rounds.failed(part, e)
                continue
            rounds.answered(response, part, str(client.broker_address(leader) or leader), client.metadata)
        if rounds.next_round() and not plan.sleep_or_give_up():
            rounds.give_up()
    return rounds.result, rounds.errors


class DeleteRecordsRounds:
    """The state of one DeleteRecords call across its rounds (see the module docstring). ``remaining`` is what the
    round being sent asks for, ``{tp: offset}``; ``result`` the low watermarks, ``errors`` the failed partitions."""

    def __init__(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.remaining = {TopicPartition(*tp): off for tp, off in offsets.items()}
        self.result: dict[TopicPartition, int] = {}
        self.errors: dict[TopicPartition, KafkaClientError] = {}
        self._retry: dict[TopicPartition, int] = {}

    def by_leader(self, leaders: Mapping[TopicPartition, int]) -> dict[int, dict[TopicPartition, int]]:
        """``remaining`` grouped by leader (``leaders``: the leader of each remaining partition), one request each."""
        grouped: dict[int, dict[TopicPartition, int]] = {}
        for tp, off in self.remaining.items():
            grouped.setdefault(leaders[tp], {})[tp] = off
        return grouped

    def failed(self, part: Mapping[TopicPartition, int], error: KafkaClientError) -> None:
        """The request for ``part`` failed with ``error``: sent again next round when retriable, else raised."""
        if not error.retriable:
            raise error
        self._retry.update(part)

    def answered(self, response: Any, part: Mapping[TopicPartition, int], peer: str, metadata: MetadataCache) -> None:
        """Sort the answer to ``part`` from broker ``peer`` (``collect_delete_records``)."""
        collect_delete_records(response, part, peer, self.result, self.errors, self._retry, metadata)

    def next_round(self) -> bool:
        """End the round: what failed retriably becomes ``remaining``; whether there is anything left."""
        self.remaining, self._retry = self._retry, {}
        return bool(self.remaining)

    def give_up(self) -> None:
        """The retries ran out: every remaining partition fails with ``timed_out``'s error."""
        self.errors.update(timed_out(self.remaining))
        self.remaining = {}


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
