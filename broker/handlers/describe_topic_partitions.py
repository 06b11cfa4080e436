"""DescribeTopicPartitions (key 75), v0 (KIP-966): topic and partition metadata in pages; Kafka 4.x's admin
client describes topics with it (`kafka-topics --describe`) and falls back to Metadata where it is not served.
Topics: the named ones, or every topic when the list is empty; only those whose name sorts at or after the
``cursor``'s topic, answered in name order, each with its partitions in index order (the cursor's topic from the
cursor's partition index, the others from 0). A response carries at most ``response_partition_limit``
partitions, capped by ``max.request.partition.size.limit`` (default 2000); ``next_cursor`` names the first
partition left out (the topic and index where the next page starts; a topic that did not fit at all starts at
0), null when nothing is left, as Kafka's ``getTopicMetadataForDescribeTopicResponse``. A named list that does
not contain the cursor's topic is INVALID_REQUEST for every topic named. A named topic that does not exist is
UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal name) with no partitions; all-topics
requests only list topics that exist. Partitions: leader -1 when its broker is not registered (no error code,
as Kafka), leader epoch, every assigned replica, the ISR, the replicas whose brokers are down or lack the
request's listener as offline; ``eligible_leader_replicas`` and ``last_known_elr`` are empty (kafkalog keeps
no KIP-966 ELR). ``topic_authorized_operations`` is set for every topic answered.
Authorization (Kafka's ``DescribeTopicPartitionsRequestHandler``): Describe on each topic. An all-topics
request silently leaves out the topics the principal may not describe; a named one it may not describe is
answered TOPIC_AUTHORIZATION_FAILED with a zero topic id and no partitions, after the others, without looking
whether it exists.
"""

from __future__ import annotations

import uuid

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.topic_name import topic_name_problem
from spark_kafkalog.security.acl import AclOperation, ResourceType

from .metadata import INTERNAL_TOPICS

API_KEY = ApiKey.DESCRIBE_TOPIC_PARTITIONS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]
_ZERO_ID = uuid.UUID(int=0)


async def handle(ctx, request):
    cache = ctx.services.metadata
    Resp = _API.Response
    Topic = Resp.DescribeTopicPartitionsResponseTopic
    cursor = request.cursor
    after = cursor.topic_name if cursor is not None else ""
    all_topics = not request.topics
    if all_topics:
        names = {name for name in cache.topics if name >= after}
    else:
        names = {t.name for t in request.topics if t.name >= after}
        if cursor is not None and cursor.topic_name not in names:
            return Resp(
                throttle_time_ms=0,
                topics=[
                    Topic(error_code=ErrorCode.INVALID_REQUEST, name=t.name, topic_id=_ZERO_ID, partitions=[])
                    for t in request.topics
                ],
                next_cursor=None,
            )
    denied: list = []
    authorized = []
    for name in sorted(names):
        if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
            authorized.append(name)
        elif not all_topics:  # no topic id, nothing that tells whether it exists
            denied.append(
                Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=_ZERO_ID, partitions=[])
            )
    limit = min(ctx.services.config["max.request.partition.size.limit"], request.response_partition_limit)
    topics, next_cursor = _page(ctx, authorized, cursor, limit, all_topics)
    for t in topics:
        t.topic_authorized_operations = ctx.authorized_operations(ResourceType.TOPIC, t.name)
    return Resp(throttle_time_ms=0, topics=topics + denied, next_cursor=next_cursor)


def _page(ctx, names: list[str], cursor, limit: int, all_topics: bool):
    """The topics ``names`` (sorted) from ``cursor`` with at most ``limit`` partitions, and the next cursor."""
    cache = ctx.services.metadata
    Resp = _API.Response
    Topic = Resp.DescribeTopicPartitionsResponseTopic
    remaining = limit
    topics: list = []
    for name in names:
        if remaining <= 0:
            if remaining == 0:  # the next page starts at this topic, whether or not it exists
                return topics, Resp.Cursor(topic_name=name, partition_index=0)
            break
        t = cache.topics.get(name)
        if t is None:
            if not all_topics:
                code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if topic_name_problem(name) is not None:
                    code = ErrorCode.INVALID_TOPIC_EXCEPTION
                topics.append(
                    Topic(
                        error_code=code,
                        name=name,
                        topic_id=_ZERO_ID,
                        is_internal=name in INTERNAL_TOPICS,
                        partitions=[],
                    )
                )
            continue
        start = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        count = len(t.replicas)
        upper = min(count, start + remaining)
        parts = [_partition(ctx, t, p) for p in range(start, upper) if p in t.replicas]
        topics.append(
            Topic(
                error_code=ErrorCode.NONE,
                name=name,
                topic_id=t.topic_id,
                is_internal=name in INTERNAL_TOPICS,
                partitions=parts,
            )
        )
        if upper < count:
            return topics, Resp.Cursor(topic_name=name, partition_index=upper)
        remaining -= len(parts)
    return topics, None


def _partition(ctx, t, p: int):
    cache = ctx.services.metadata
    Part = _API.Response.DescribeTopicPartitionsResponseTopic.DescribeTopicPartitionsResponsePartition
    replicas = list(t.replicas[p])
    st = t.states.get(p)
    leader = st.leader if st is not None else -1
    if leader < 0 or not cache.alive(leader) or cache.brokers[leader].listener_endpoint(ctx.listener) is None:
        leader = -1
    return Part(
        error_code=ErrorCode.NONE,
        partition_index=p,
        leader_id=leader,
        leader_epoch=st.leader_epoch if st is not None else -1,
        replica_nodes=replicas,
        isr_nodes=list(st.isr) if st is not None else [],
        eligible_leader_replicas=[],
        last_known_elr=[],
        offline_replicas=[
            r for r in replicas if not cache.alive(r) or cache.brokers[r].listener_endpoint(ctx.listener) is None
        ],
    )
