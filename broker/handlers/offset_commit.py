"""OffsetCommit (key 8), v0-8: store a group's consumed positions.

v0 (Kafka 0.8.1's format) writes ZooKeeper's ``/consumers/<group>/offsets/<topic>/<partition>`` on any
broker (metadata is dropped there, as in 0.8). v1+ go to the group's coordinator, which appends them to
``__consumer_offsets`` (acknowledged as acks=all) and then serves them from its cache. A commit with
generation -1 and no member id (consumers using ``assign()``) is accepted while the group has no members;
otherwise the member and generation must be current (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID). Per partition: UNKNOWN_TOPIC_OR_PARTITION for partitions that do not
exist, OFFSET_METADATA_TOO_LARGE beyond ``offset.metadata.max.bytes``. v1's per-partition commit
timestamp and v2-4's retention time are honoured (an explicit retention sets the expire timestamp).
Gaps: v9 (KIP-848 member epochs) is not declared.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from broker.coordinator.offset_store import CommittedOffset
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import coordinator

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (0, 8)
_API = API_BY_KEY[API_KEY]


def _response(request, codes):
    Resp = _API.Response
    Topic, Part = Resp.OffsetCommitResponseTopic, Resp.OffsetCommitResponseTopic.OffsetCommitResponsePartition
    return Resp(
        throttle_time_ms=0,
        topics=[
            Topic(
                name=t.name,
                partitions=[
                    Part(partition_index=p.partition_index, error_code=codes(t.name, p.partition_index))
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


async def handle(ctx, request):
    b = ctx.services
    if ctx.version == 0:
        return await _commit_to_zookeeper(ctx, request)
    try:
        gc = coordinator(ctx)
    except GroupError as e:
        code = e.error_code
        return _response(request, lambda t, p: code)
    now = gc.now()
    expire = now + request.retention_time_ms if 2 <= ctx.version <= 4 and request.retention_time_ms >= 0 else -1
    offsets, unknown = {}, set()
    for t in request.topics:
        topic = b.metadata.topics.get(t.name)
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if topic is None or p.partition_index not in topic.replicas:
                unknown.add(tp)
                continue
            ts = p.commit_timestamp if ctx.version == 1 and p.commit_timestamp >= 0 else now
            offsets[tp] = CommittedOffset(
                p.committed_offset, p.committed_leader_epoch, p.committed_metadata or "", ts, expire
            )
    try:
        codes = await gc.commit_offsets(
            request.group_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            generation=request.generation_id_or_member_epoch,
            offsets=offsets,
        )
    except GroupError as e:
        code = e.error_code
        return _response(request, lambda t, p: code)
    return _response(request, lambda t, p: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if (t, p) in unknown else codes[(t, p)])


async def _commit_to_zookeeper(ctx, request):
    b = ctx.services
    codes = {}
    for t in request.topics:
        for p in t.partitions:
            try:
                await b.run_blocking(
                    b.registry.commit_consumer_offset, request.group_id, t.name, p.partition_index, p.committed_offset
                )
                codes[(t.name, p.partition_index)] = ErrorCode.NONE
            except Exception as e:  # the registry is unreachable
                ctx.log.warning("OffsetCommit v0 of group %s to ZooKeeper failed: %s", request.group_id, e)
                codes[(t.name, p.partition_index)] = ErrorCode.UNKNOWN_SERVER_ERROR
    return _response(request, lambda t, p: codes[(t, p)])
