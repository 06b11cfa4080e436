"""DescribeShareGroupOffsets (key 90), v0-1: the start offset (SPSO) of each share-partition of share groups, as
``kafka-share-groups --describe`` and Kafka 4.4's ``Admin.listShareGroupOffsets`` read them (KIP-932).

Per group: ``topics`` null asks for every partition the group has initialized share state for (its
ShareGroupStatePartitionMetadata), else the partitions named. Each partition's state is read from its share
coordinator with ``share_persister.read_summary`` (ReadShareGroupStateSummary, local or remote); its
``start_offset`` is -1 when the state has none yet (initialized, not chosen). v1 ``lag``: the records between the
SPSO and the high watermark not yet acknowledged or archived, when this broker leads the partition (from the share
partition it has loaded, else from the persisted batches); -1 (unknown) otherwise (the tools then compute it from
the end offset). Errors per
group: GROUP_AUTHORIZATION_FAILED, INVALID_GROUP_ID, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
GROUP_ID_NOT_FOUND ("Group <id> not found." / "... is not a share group."), UNSUPPORTED_VERSION when
``group.share.enable`` is false; per partition: UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED and the
persister's errors.

Authorization (Kafka's ``handleDescribeShareGroupOffsetsRequest``): DESCRIBE on the group, DESCRIBE on each topic.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, coordinator, group_authorized

API_KEY: Final = ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Group = Resp.DescribeShareGroupOffsetsResponseGroup
Topic = Group.DescribeShareGroupOffsetsResponseTopic
Partition = Topic.DescribeShareGroupOffsetsResponsePartition
ZERO_UUID = uuid.UUID(int=0)
FINISHED = (2, 4)  # RecordState ACKNOWLEDGED, ARCHIVED


def _partition(index: int, code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> Any:
    return Partition(partition_index=index, start_offset=-1, leader_epoch=-1, lag=-1, error_code=code,
                     error_message=message)  # fmt: skip


def _lag(ctx: RequestContext, group_id: str, topic: str, topic_id: uuid.UUID, partition: int, state: Any) -> int:
    """The records from the SPSO up to the high watermark not finished yet; -1 when not known here. The share
    partition this leader has loaded knows them best (its in-flight records); else the persisted batches."""
    if state.start_offset < 0:
        return -1
    part, code = ctx.services.replica_manager.leader_partition(topic, partition)
    if part is None or code != ErrorCode.NONE:
        return -1
    hw = part.high_watermark
    loaded = ctx.services.share_partitions.loaded(group_id, topic_id, partition)
    if loaded is not None:
        return int(loaded.lag(hw))
    finished = sum(
        max(0, min(b.last_offset, hw - 1) - max(b.first_offset, state.start_offset) + 1)
        for b in getattr(state, "state_batches", ())
        if b.delivery_state in FINISHED
    )
    return max(0, hw - state.start_offset - finished)


async def _read(ctx: RequestContext, group_id: str, topic: str, topic_id: uuid.UUID, index: int) -> Any:
    persister = ctx.services.share_persister
    try:
        code, message, state = await persister.read_summary(group_id, topic_id, index, -1)
    except Exception as e:  # a persister failure answers this partition only
        return _partition(index, ErrorCode.UNKNOWN_SERVER_ERROR, f"reading the share state failed: {e}")
    if code != ErrorCode.NONE or state is None:
        return _partition(index, code if code != ErrorCode.NONE else ErrorCode.UNKNOWN_SERVER_ERROR, message)
    return Partition(
        partition_index=index,
        start_offset=state.start_offset,
        leader_epoch=state.leader_epoch,
        lag=_lag(ctx, group_id, topic, topic_id, index, state),
        error_code=ErrorCode.NONE,
        error_message=None,
    )


async def _describe(ctx: RequestContext, requested: Any) -> Any:
    group_id = requested.group_id
    out = Group(group_id=group_id, topics=[], error_code=ErrorCode.NONE, error_message=None)
    if not group_authorized(ctx, AclOperation.DESCRIBE, group_id):
        out.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
        return out
    gc = coordinator(ctx)
    try:
        group = gc.describe_share_group(group_id)
    except GroupError as e:
        out.error_code, out.error_message = e.error_code, str(e) or None
        return out
    metadata = ctx.services.metadata
    wanted: list[tuple[str, list[int]]]
    if requested.topics is None:
        by_topic: dict[str, list[int]] = {}
        for topic_id, index in sorted(group.initialized_partitions(), key=lambda tp: (str(tp[0]), tp[1])):
            name = metadata.topic_by_id(topic_id)
            if name is not None:
                by_topic.setdefault(name, []).append(index)
        wanted = sorted(by_topic.items())
    else:
        wanted = [(t.topic_name, list(t.partitions)) for t in requested.topics]
    allowed = authorized_topics(ctx, AclOperation.DESCRIBE, [name for name, _ in wanted])
    reads: list[tuple[Any, list[Any]]] = []
    for name, indexes in wanted:
        meta = metadata.topics.get(name)
        topic = Topic(topic_name=name, topic_id=meta.topic_id if meta is not None else ZERO_UUID, partitions=[])
        out.topics.append(topic)
        if name not in allowed:
            topic.partitions = [_partition(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in indexes]
        elif meta is None:
            message = "This server does not host this topic-partition."
            topic.partitions = [_partition(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message) for p in indexes]
        else:
            jobs = []
            for p in indexes:
                if p not in meta.replicas:
                    message = "This server does not host this topic-partition."
                    jobs.append(_ready(_partition(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message)))
                else:
                    jobs.append(_read(ctx, group_id, name, meta.topic_id, p))
            reads.append((topic, jobs))
    for topic, jobs in reads:
        topic.partitions = list(await asyncio.gather(*jobs))
    return out


async def _ready(value: Any) -> Any:
    return value


async def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequest) -> DescribeShareGroupOffsetsResponse:
    if not coordinator(ctx).share_groups_enabled:
        message = "Share groups are not enabled on this broker."
        groups = [
            Group(group_id=g.group_id, topics=[], error_code=ErrorCode.UNSUPPORTED_VERSION, error_message=message)
            for g in request.groups
        ]
        return Resp(throttle_time_ms=0, groups=groups)
    groups = await asyncio.gather(*(_describe(ctx, g) for g in request.groups))
    return Resp(throttle_time_ms=0, groups=list(groups))
