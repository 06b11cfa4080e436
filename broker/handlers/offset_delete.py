"""OffsetDelete (key 47), v0: delete a group's committed offsets of some partitions (tombstones in
``__consumer_offsets``). GROUP_SUBSCRIBED_TO_TOPIC for topics the group's consumer-protocol members
subscribe to; GROUP_ID_NOT_FOUND for unknown groups; NOT_COORDINATOR for groups coordinated elsewhere.

Authorization (Kafka's ``handleOffsetDeleteRequest``): DELETE on the group, else the top-level
GROUP_AUTHORIZATION_FAILED and no topics; then READ on each topic, else its partitions
TOPIC_AUTHORIZATION_FAILED, checked before existence (partitions that do not exist:
UNKNOWN_TOPIC_OR_PARTITION). Only the remaining partitions reach the coordinator, whose group error (it is
asked even with none) replaces the whole answer.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, coordinator, group_authorized

API_KEY = ApiKey.OFFSET_DELETE
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    Topic = Resp.OffsetDeleteResponseTopic
    Part = Topic.OffsetDeleteResponsePartition
    if not group_authorized(ctx, AclOperation.DELETE, request.group_id):
        return Resp(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[])
    readable = authorized_topics(ctx, AclOperation.READ, (t.name for t in request.topics))
    known = ctx.services.metadata.topics
    errors: dict[tuple[str, int], ErrorCode] = {}
    tps = []
    for t in request.topics:
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if t.name not in readable:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif t.name not in known or p.partition_index not in known[t.name].replicas:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                tps.append(tp)
    try:
        code, per_partition = await coordinator(ctx).delete_offsets(request.group_id, tps)
    except GroupError as e:
        code, per_partition = e.error_code, {}
    if code != ErrorCode.NONE:
        return Resp(error_code=code, throttle_time_ms=0, topics=[])
    per_partition = {**per_partition, **errors}
    return Resp(
        error_code=ErrorCode.NONE,
        throttle_time_ms=0,
        topics=[
            Topic(
                name=t.name,
                partitions=[
                    Part(partition_index=p.partition_index, error_code=per_partition[(t.name, p.partition_index)])
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )
