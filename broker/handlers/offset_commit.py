"""OffsetCommit (key 8), v0-10: store a group's consumed positions.

v0 (Kafka 0.8.1/0.8.2's storage) writes ZooKeeper's ``/consumers/<group>/offsets/<topic>/<partition>``
(the offset as decimal ASCII; metadata is dropped, as in 0.8) on any broker, without the group coordinator,
as Kafka 0.8.2 did; per partition UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist,
OFFSET_METADATA_TOO_LARGE beyond ``offset.metadata.max.bytes``, INVALID_GROUP_ID for a group id that cannot
be one ZooKeeper path component, UNKNOWN_SERVER_ERROR when ZooKeeper is unreachable.

v1+ go to the group's coordinator, which appends them to ``__consumer_offsets`` (acknowledged as acks=all)
and then serves them from its cache; ZooKeeper is never read or written. A commit with generation -1 and no
member id (consumers using ``assign()``) is accepted while the group has no members; otherwise the member
and generation must be current (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
FENCED_INSTANCE_ID). Per partition: UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist,
OFFSET_METADATA_TOO_LARGE beyond ``offset.metadata.max.bytes``. v1's per-partition commit timestamp and
v2-4's retention time are honoured (an explicit retention sets the expire timestamp). v9 (KIP-848) has v8's
shape; for classic groups its generation is checked as before, and a generation >= 0 for a group that does
not exist is GROUP_ID_NOT_FOUND (as Kafka's v9; older versions keep the coordinator's answer). For a KIP-848
consumer group the generation is the member epoch: an epoch < 0 commits only while the group has no members,
otherwise UNKNOWN_MEMBER_ID for a member not in the group and STALE_MEMBER_EPOCH for an epoch other than the
member's; a member committing below v9 gets UNSUPPORTED_VERSION (Kafka's rules). Metadata is
stored byte for byte (null as empty, as Kafka), except the trailing NUL of clients that send metadata as a C
string (``_groups``: confluent-kafka-python). v10 (Kafka 4.x's consumers) names topics by id: each id is
named from this broker's metadata after the group is authorized, an id no topic has is UNKNOWN_TOPIC_ID for
each of its partitions, and answers carry the ids (``_topic_ids``).

Authorization (every version, v0 included, before anything else): READ on the group, else every partition
GROUP_AUTHORIZATION_FAILED; then READ on each topic, else its partitions TOPIC_AUTHORIZATION_FAILED (checked
before the topic's existence). When no partition passes both checks and exists, the coordinator is not asked.
"""

from __future__ import annotations

from broker.cluster.zk_layout import check_group
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, coordinator, group_authorized, requested_offsets
from ._topic_ids import answer_by_topic_id

API_KEY = ApiKey.OFFSET_COMMIT
VERSIONS = (0, 10)
TOPIC_IDS_FROM = 10
_API = API_BY_KEY[API_KEY]


def _response(request, codes):
    Resp = _API.Response
    Topic, Part = Resp.OffsetCommitResponseTopic, Resp.OffsetCommitResponseTopic.OffsetCommitResponsePartition
    return Resp(
        throttle_time_ms=0,
        topics=[
            Topic(
                name=t.name,
                topic_id=t.topic_id,
                partitions=[
                    Part(partition_index=p.partition_index, error_code=codes(t.name, p.partition_index))
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


async def handle(ctx, request):
    if ctx.version < TOPIC_IDS_FROM or not group_authorized(ctx, AclOperation.READ, request.group_id):
        return await _handle(ctx, request)
    Topic = _API.Response.OffsetCommitResponseTopic
    return await answer_by_topic_id(ctx, request, _handle, Topic, Topic.OffsetCommitResponsePartition)


async def _handle(ctx, request):
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _response(request, lambda t, p: ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if ctx.version == 0:
        return await _commit_to_zookeeper(ctx, request)
    gc = coordinator(ctx)
    now = gc.now()
    expire = now + request.retention_time_ms if 2 <= ctx.version <= 4 and request.retention_time_ms >= 0 else -1
    explicit_time = ctx.version == 1  # v1 carries a commit timestamp per partition (-1: now)
    offsets, errors = requested_offsets(
        ctx,
        request.topics,
        lambda p: p.commit_timestamp if explicit_time and p.commit_timestamp >= 0 else now,
        expire,
    )
    if not offsets:  # nothing authorized that exists: Kafka answers without the coordinator
        return _response(request, lambda t, p: errors[(t, p)])
    consumer = gc.consumer_groups.get(request.group_id)
    if (
        consumer is not None
        and ctx.version < 9
        and not (request.generation_id_or_member_epoch < 0 and consumer.is_empty)
    ):
        # Kafka: a consumer group's consumer-protocol members commit with v9+ (their member epoch); its classic
        # members (online migration) commit as before, with their epoch as the generation
        member = consumer.members.get(request.member_id)
        if member is None or member.classic_member_metadata is None:
            code = ErrorCode.UNKNOWN_MEMBER_ID if member is None else ErrorCode.UNSUPPORTED_VERSION
            return _response(request, lambda t, p: errors.get((t, p), code))
    if ctx.version >= 9 and request.generation_id_or_member_epoch >= 0:
        try:
            missing = gc.describe_group(request.group_id) is None and consumer is None
        except GroupError as e:
            code = e.error_code
            return _response(request, lambda t, p: errors.get((t, p), code))
        if missing:
            return _response(request, lambda t, p: errors.get((t, p), ErrorCode.GROUP_ID_NOT_FOUND))
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
        return _response(request, lambda t, p: errors.get((t, p), code))
    return _response(request, lambda t, p: errors[(t, p)] if (t, p) in errors else codes[(t, p)])


async def _commit_to_zookeeper(ctx, request):
    b = ctx.services
    limit = b.config["offset.metadata.max.bytes"]
    readable = authorized_topics(ctx, AclOperation.READ, (t.name for t in request.topics))
    codes = {}
    for t in request.topics:
        topic = b.metadata.topics.get(t.name)
        for p in t.partitions:
            tp = (t.name, p.partition_index)
            if t.name not in readable:
                codes[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None or p.partition_index not in topic.replicas:
                codes[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif p.committed_metadata is not None and len(p.committed_metadata.encode()) > limit:
                codes[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            elif not _valid_group(request.group_id):
                codes[tp] = ErrorCode.INVALID_GROUP_ID
            else:
                codes[tp] = await _write_zookeeper_offset(ctx, request.group_id, tp, p.committed_offset)
    return _response(request, lambda t, p: codes[(t, p)])


async def _write_zookeeper_offset(ctx, group_id: str, tp: tuple[str, int], offset: int) -> ErrorCode:
    b = ctx.services
    try:
        await b.run_blocking(b.registry.commit_consumer_offset, group_id, tp[0], tp[1], offset)
    except Exception as e:  # the registry is unreachable
        ctx.log.warning("OffsetCommit v0 of group %s to ZooKeeper failed: %s", group_id, e)
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return ErrorCode.NONE


def _valid_group(group_id: str) -> bool:
    """Whether ``group_id`` can be one ZooKeeper path component."""
    try:
        check_group(group_id)
    except ValueError:
        return False
    return True
