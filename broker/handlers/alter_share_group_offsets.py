"""AlterShareGroupOffsets (key 91), v0: set the start offset (SPSO) of share-partitions of an empty share group
(KIP-932; ``kafka-share-groups --reset-offsets``, Kafka 4.4's ``Admin.alterShareGroupOffsets``).

Each partition's share state is replaced by one starting at the given offset (``_share_offsets``: a new state
epoch, no in-flight records; the partition's leader is fenced and reloads it). Request errors: GROUP_ID_NOT_FOUND
(unknown, or not a share group), NON_EMPTY_GROUP ("The group is not empty."), GROUP_AUTHORIZATION_FAILED,
NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, UNSUPPORTED_VERSION when ``group.share.enable`` is false. Partition
errors: TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST for a negative offset, the
persister's errors. Gap: a partition the group has not initialized yet (no member ever subscribed to it) is
INVALID_REQUEST, where Kafka 4.4 initializes it with the offset.

Authorization (Kafka's ``handleAlterShareGroupOffsetsRequest``): READ on the group, READ on each topic.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
)
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, group_authorized
from ._share_offsets import empty_share_group, reset_share_partition

API_KEY: Final = ApiKey.ALTER_SHARE_GROUP_OFFSETS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Topic = Resp.AlterShareGroupOffsetsResponseTopic
Partition = Topic.AlterShareGroupOffsetsResponsePartition
ZERO_UUID = uuid.UUID(int=0)
UNKNOWN = "This server does not host this topic-partition."


def _failed(index: int, code: ErrorCode, message: str | None = None) -> Any:
    return Partition(partition_index=index, error_code=code, error_message=message)


async def _reset(ctx: RequestContext, group_id: str, topic_id: uuid.UUID, index: int, offset: int) -> Any:
    code, message = await reset_share_partition(ctx, group_id, topic_id, index, offset)
    return _failed(index, code, message if code != ErrorCode.NONE else None)


async def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequest) -> AlterShareGroupOffsetsResponse:
    group_id = request.group_id
    if not group_authorized(ctx, AclOperation.READ, group_id):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, responses=[])
    try:
        group = empty_share_group(ctx, group_id)
    except GroupError as e:
        return Resp(throttle_time_ms=0, error_code=e.error_code, error_message=str(e) or None, responses=[])
    initialized = set(group.initialized_partitions())
    metadata = ctx.services.metadata
    allowed = authorized_topics(ctx, AclOperation.READ, [t.topic_name for t in request.topics])
    responses = []
    jobs: list[tuple[Any, list[Any]]] = []
    for t in request.topics:
        meta = metadata.topics.get(t.topic_name)
        out = Topic(topic_name=t.topic_name, topic_id=meta.topic_id if meta is not None else ZERO_UUID, partitions=[])
        responses.append(out)
        if t.topic_name not in allowed:
            out.partitions = [_failed(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in t.partitions]
            continue
        if meta is None:
            out.partitions = [
                _failed(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN) for p in t.partitions
            ]
            continue
        pending = []
        for p in t.partitions:
            if p.partition_index not in meta.replicas:
                pending.append(_ready(_failed(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN)))
            elif p.start_offset < 0:
                message = f"start offset {p.start_offset} is negative"
                pending.append(_ready(_failed(p.partition_index, ErrorCode.INVALID_REQUEST, message)))
            elif (meta.topic_id, p.partition_index) not in initialized:
                message = f"share group {group_id} has no state for {t.topic_name}-{p.partition_index} yet"
                pending.append(_ready(_failed(p.partition_index, ErrorCode.INVALID_REQUEST, message)))
            else:
                pending.append(_reset(ctx, group_id, meta.topic_id, p.partition_index, p.start_offset))
        jobs.append((out, pending))
    for out, pending in jobs:
        out.partitions = list(await asyncio.gather(*pending))
    return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, responses=responses)


async def _ready(value: Any) -> Any:
    return value
