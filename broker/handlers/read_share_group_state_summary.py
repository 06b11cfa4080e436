"""ReadShareGroupStateSummary (key 87), v0-1: the share group coordinator reads share-partitions' state epoch,
leader epoch and start offset (for DescribeShareGroupOffsets); v1 adds the stored ``delivery_complete_count``
(-1: unknown). A share-partition without state answers NONE with state epoch 0, leader epoch -1, start offset
-1. Per-partition errors: INVALID_REQUEST (negative partition), FENCED_LEADER_EPOCH (a leader epoch other than
-1 older than the stored one), NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE. Needs
ClusterAction on the cluster (else CLUSTER_AUTHORIZATION_FAILED); an empty group id is INVALID_REQUEST
(``_share_state``).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse,
)

from ._share_state import fan_out

API_KEY: Final = ApiKey.READ_SHARE_GROUP_STATE_SUMMARY
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: ReadShareGroupStateSummaryRequest) -> ReadShareGroupStateSummaryResponse:
    Resp = _API.Response
    Result = Resp.ReadStateSummaryResult
    Part = Result.PartitionResult
    coordinator = ctx.services.share_coordinator

    def error(partition: int, code: ErrorCode, message: str | None) -> Any:
        return Part(
            partition=partition,
            error_code=code,
            error_message=message,
            state_epoch=0,
            leader_epoch=-1,
            start_offset=-1,
            delivery_complete_count=-1,
        )

    async def call(topic_id: uuid.UUID, p: Any) -> Any:
        code, message, state = await coordinator.read_summary_state(
            request.group_id, topic_id, p.partition, p.leader_epoch
        )
        if code != ErrorCode.NONE or state is None:
            return error(p.partition, code, message)
        return Part(
            partition=p.partition,
            error_code=ErrorCode.NONE,
            error_message=None,
            state_epoch=state.state_epoch,
            leader_epoch=state.leader_epoch,
            start_offset=state.start_offset,
            delivery_complete_count=state.delivery_complete_count,
        )

    results = await fan_out(ctx, request, lambda t, parts: Result(topic_id=t, partitions=parts), call, error)
    return Resp(results=results)
