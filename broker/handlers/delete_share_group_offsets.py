"""DeleteShareGroupOffsets (key 92), v0: forget the share state of whole topics of an empty share group (KIP-932;
``kafka-share-groups --delete-offsets``, Kafka 4.4's ``Admin.deleteShareGroupOffsets``).

Each partition of the topic the group has initialized gets its state reset to none chosen (``_share_offsets``:
start offset -1, a new state epoch, no in-flight records): the next time its leader loads it, the start offset is
chosen again by the group's ``share.auto.offset.reset``, as after Kafka's deletion and re-initialization. Request
errors: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, GROUP_AUTHORIZATION_FAILED, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, UNSUPPORTED_VERSION when ``group.share.enable`` is false. Topic errors:
TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION, the first of the persister's errors on its partitions.
Gap: the reset keeps the topic in the group's ShareGroupStatePartitionMetadata (Kafka removes it), so
DescribeShareGroupOffsets still lists its partitions, with start offset -1.

Authorization (Kafka's ``handleDeleteShareGroupOffsetsRequest``): DELETE on the group, READ on each topic.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
)
from spark_kafkalog.security.acl import AclOperation

from ._groups import authorized_topics, group_authorized
from ._share_offsets import empty_share_group, reset_share_partition

API_KEY: Final = ApiKey.DELETE_SHARE_GROUP_OFFSETS
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Topic = Resp.DeleteShareGroupOffsetsResponseTopic
ZERO_UUID = uuid.UUID(int=0)


async def _delete(ctx: RequestContext, group_id: str, out: Any, topic_id: uuid.UUID, partitions: list[int]) -> None:
    results = await asyncio.gather(*(reset_share_partition(ctx, group_id, topic_id, p, -1) for p in partitions))
    failed = [(code, message) for code, message in results if code != ErrorCode.NONE]
    if failed:
        out.error_code, out.error_message = failed[0]


async def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse:
    group_id = request.group_id
    if not group_authorized(ctx, AclOperation.DELETE, group_id):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, responses=[])
    try:
        group = empty_share_group(ctx, group_id)
    except GroupError as e:
        return Resp(throttle_time_ms=0, error_code=e.error_code, error_message=str(e) or None, responses=[])
    initialized = group.initialized_partitions()
    metadata = ctx.services.metadata
    allowed = authorized_topics(ctx, AclOperation.READ, [t.topic_name for t in request.topics])
    responses = []
    jobs = []
    for t in request.topics:
        meta = metadata.topics.get(t.topic_name)
        out = Topic(
            topic_name=t.topic_name,
            topic_id=meta.topic_id if meta is not None else ZERO_UUID,
            error_code=ErrorCode.NONE,
            error_message=None,
        )
        responses.append(out)
        if t.topic_name not in allowed:
            out.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif meta is None:
            out.error_code, out.error_message = (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                "This server does not host this topic-partition.",
            )
        else:
            partitions = sorted(p for tid, p in initialized if tid == meta.topic_id)
            jobs.append(_delete(ctx, group_id, out, meta.topic_id, partitions))
    await asyncio.gather(*jobs)
    return Resp(throttle_time_ms=0, error_code=ErrorCode.NONE, responses=responses)
