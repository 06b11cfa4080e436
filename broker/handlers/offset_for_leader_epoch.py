"""OffsetForLeaderEpoch (key 23), v0-4 (clients use 2+): the end offset of a leader epoch, from the leader
epoch cache of partitions this broker leads. An epoch the log never saw answers the end offset of the
largest smaller epoch (KIP-279); an epoch newer than the leader's is UNDEFINED (-1, -1). v2+
``current_leader_epoch`` is fenced as in Fetch.
Authorization (KIP-320): ClusterAction on the cluster (followers) allows every topic; otherwise each topic
needs Describe, else its partitions answer TOPIC_AUTHORIZATION_FAILED before anything else is looked at.
"""

from __future__ import annotations

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    b = ctx.services
    Resp = _API.Response
    Part = Resp.OffsetForLeaderTopicResult.EpochEndOffset
    cluster_action = ctx.authorize_cluster(AclOperation.CLUSTER_ACTION)
    topics = []
    for t in request.topics:
        parts = []
        if not cluster_action and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic):
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            parts = [Part(error_code=code, partition=p.partition, leader_epoch=-1, end_offset=-1) for p in t.partitions]
            topics.append(Resp.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
            continue
        for p in t.partitions:
            part, code = b.replica_manager.leader_partition(t.topic, p.partition)
            if part is not None:
                code = part.check_leader_epoch(p.current_leader_epoch)
            if code != ErrorCode.NONE:
                parts.append(Part(error_code=code, partition=p.partition, leader_epoch=-1, end_offset=-1))
                continue
            epoch, end = part.log.end_offset_for_epoch(p.leader_epoch)
            parts.append(Part(error_code=ErrorCode.NONE, partition=p.partition, leader_epoch=epoch, end_offset=end))
        topics.append(Resp.OffsetForLeaderTopicResult(topic=t.topic, partitions=parts))
    return Resp(throttle_time_ms=0, topics=topics)
