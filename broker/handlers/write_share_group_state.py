"""WriteShareGroupState (key 85), v0-1: a share-partition leader writes its state to the share coordinator: the
start offset and the state batches that changed, folded into the stored state (a ShareUpdate, or every
``share.coordinator.snapshot.update.records.per.snapshot`` writes a ShareSnapshot); v1's
``delivery_complete_count`` is stored (-1: unknown). Per-partition errors: INVALID_REQUEST (uninitialized
share-partition, negative partition, a batch whose first offset is past its last), FENCED_LEADER_EPOCH /
FENCED_STATE_EPOCH (an older epoch than the stored one), UNKNOWN_TOPIC_OR_PARTITION, NOT_COORDINATOR /
COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT. Needs ClusterAction on the cluster
(else CLUSTER_AUTHORIZATION_FAILED); an empty group id is INVALID_REQUEST (``_share_state``).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from broker.api import RequestContext
from broker.share.state_batches import StateBatch
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.write_share_group_state import (
    WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
)

from ._share_state import fan_out

API_KEY: Final = ApiKey.WRITE_SHARE_GROUP_STATE
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: WriteShareGroupStateRequest) -> WriteShareGroupStateResponse:
    Resp = _API.Response
    Result = Resp.WriteStateResult
    Part = Result.PartitionResult
    coordinator = ctx.services.share_coordinator

    def error(partition: int, code: ErrorCode, message: str | None) -> Any:
        return Part(partition=partition, error_code=code, error_message=message)

    async def call(topic_id: uuid.UUID, p: Any) -> Any:
        batches = [
            StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in p.state_batches
        ]
        code, message = await coordinator.write(
            request.group_id,
            topic_id,
            p.partition,
            p.state_epoch,
            p.leader_epoch,
            p.start_offset,
            batches,
            p.delivery_complete_count if ctx.version >= 1 else -1,
        )
        return error(p.partition, code, message)

    results = await fan_out(ctx, request, lambda t, parts: Result(topic_id=t, partitions=parts), call, error)
    return Resp(results=results)
