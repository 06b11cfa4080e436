"""Helpers shared by the share-state handlers (InitializeShareGroupState 83, ReadShareGroupState 84,
WriteShareGroupState 85, DeleteShareGroupState 86, ReadShareGroupStateSummary 87): Kafka's authorization and
request checks, and the per-partition fan-out to the share coordinator.

As Kafka's ``KafkaApis``: the caller needs CLUSTER_ACTION on the cluster (the APIs are for brokers), else every
partition answers CLUSTER_AUTHORIZATION_FAILED; an empty group id answers INVALID_REQUEST for every partition
(Kafka's "Group id must be non-empty."). Each partition is its own call to ``services.share_coordinator``, all at
once; the results keep the request's topic and partition order.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import AclOperation

EMPTY_GROUP = "Group id must be non-empty."


def refusal(ctx: Any, group_id: str) -> tuple[ErrorCode, str] | None:
    """The error every partition answers, or None when the request may go on."""
    if not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"{ctx.principal} may not use the share-state APIs"
    if not group_id:
        return ErrorCode.INVALID_REQUEST, EMPTY_GROUP
    return None


async def fan_out(
    ctx: Any,
    request: Any,
    topic_result: Callable[[uuid.UUID, list[Any]], Any],
    call: Callable[[uuid.UUID, Any], Awaitable[Any]],
    error: Callable[[int, ErrorCode, str], Any],
) -> list[Any]:
    """Per topic of ``request``, ``topic_result(topic id, [partition results])``: ``call(topic id, partition
    data)`` for each partition, or ``error(partition, code, message)`` for all when the request is refused."""
    refused = refusal(ctx, request.group_id)
    out = []
    for topic in request.topics:
        if refused is not None:
            parts = [error(p.partition, *refused) for p in topic.partitions]
        else:
            parts = list(await asyncio.gather(*(call(topic.topic_id, p) for p in topic.partitions)))
        out.append(topic_result(topic.topic_id, parts))
    return out
