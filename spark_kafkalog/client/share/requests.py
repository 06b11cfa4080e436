"""The share consumer's wire requests, built from its sans-IO parts' plans.

* ShareGroupHeartbeat (76, v1): ``heartbeat_body`` of a ``membership.ShareHeartbeat``.
* ShareFetch (78, v1-2): ``share_fetch_body`` of a ``session.ShareFetchPlan`` - ``topics`` by topic id with each
  partition's acknowledgement batches, ``forgotten_topics_data``, ``max_records`` and ``batch_size`` (both
  ``max.poll.records``, as Kafka's consumer); v2's ``share_acquire_mode`` stays 0 (batch-optimized) and no RENEW is
  sent (``is_renew_ack`` false).
* ShareAcknowledge (79, v1-2): ``share_acknowledge_body`` of a session epoch and acknowledgement batches.

Partitions are named by topic id: ``topic_ids`` maps each topic name to its id (from the assignment). Stateless.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from spark_kafkalog.client.share.acknowledgements import AcknowledgementBatch
from spark_kafkalog.client.share.membership import ShareHeartbeat
from spark_kafkalog.client.share.session import ShareFetchPlan
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = ["heartbeat_body", "share_acknowledge_body", "share_fetch_body"]

_HEARTBEAT = API_BY_KEY[ApiKey.SHARE_GROUP_HEARTBEAT].Request
_FETCH = API_BY_KEY[ApiKey.SHARE_FETCH].Request
_ACKNOWLEDGE = API_BY_KEY[ApiKey.SHARE_ACKNOWLEDGE].Request


def heartbeat_body(request: ShareHeartbeat) -> Any:
    """The ShareGroupHeartbeat request of ``request``."""
    names = request.subscribed_topic_names
    return _HEARTBEAT(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        rack_id=request.rack_id,
        subscribed_topic_names=None if names is None else list(names),
    )


def _by_topic(
    partitions: Sequence[TopicPartition], topic_ids: Mapping[str, uuid.UUID]
) -> dict[uuid.UUID, list[TopicPartition]]:
    out: dict[uuid.UUID, list[TopicPartition]] = {}
    for tp in partitions:
        out.setdefault(topic_ids[tp.topic], []).append(tp)
    return out


def _topics(
    Topic: Any,
    Partition: Any,
    partitions: Sequence[TopicPartition],
    acknowledgements: Mapping[TopicPartition, Sequence[AcknowledgementBatch]],
    topic_ids: Mapping[str, uuid.UUID],
) -> list[Any]:
    """``partitions`` by topic id as the request's ``Topic``/``Partition`` entries (ShareFetch's ``FetchTopic``/
    ``FetchPartition`` or ShareAcknowledge's ``AcknowledgeTopic``/``AcknowledgePartition``: the same fields), each
    partition with its ``acknowledgements`` (none when absent)."""
    Batch = Partition.AcknowledgementBatch
    return [
        Topic(
            topic_id=topic_id,
            partitions=[
                Partition(
                    partition_index=tp.partition,
                    acknowledgement_batches=[
                        Batch(
                            first_offset=b.first_offset,
                            last_offset=b.last_offset,
                            acknowledge_types=list(b.acknowledge_types),
                        )
                        for b in acknowledgements.get(tp, ())
                    ],
                )
                for tp in tps
            ],
        )
        for topic_id, tps in _by_topic(partitions, topic_ids).items()
    ]


def share_fetch_body(
    group_id: str,
    member_id: str,
    plan: ShareFetchPlan,
    topic_ids: Mapping[str, uuid.UUID],
    *,
    max_wait_ms: int,
    min_bytes: int,
    max_bytes: int,
    max_records: int,
) -> Any:
    """The ShareFetch of ``plan``."""
    R = _FETCH
    topics = _topics(R.FetchTopic, R.FetchTopic.FetchPartition, plan.partitions, plan.acknowledgements, topic_ids)
    forgotten = [
        R.ForgottenTopic(topic_id=topic_id, partitions=[tp.partition for tp in tps])
        for topic_id, tps in _by_topic(plan.forgotten, topic_ids).items()
    ]
    return R(
        group_id=group_id,
        member_id=member_id,
        share_session_epoch=plan.epoch,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        max_records=max_records,
        batch_size=max_records,
        topics=topics,
        forgotten_topics_data=forgotten,
    )


def share_acknowledge_body(
    group_id: str,
    member_id: str,
    epoch: int,
    acknowledgements: Mapping[TopicPartition, Sequence[AcknowledgementBatch]],
    topic_ids: Mapping[str, uuid.UUID],
) -> Any:
    """The ShareAcknowledge at session ``epoch`` carrying ``acknowledgements``."""
    R = _ACKNOWLEDGE
    Topic = R.AcknowledgeTopic
    topics = _topics(Topic, Topic.AcknowledgePartition, sorted(acknowledgements), acknowledgements, topic_ids)
    return R(group_id=group_id, member_id=member_id, share_session_epoch=epoch, topics=topics)
