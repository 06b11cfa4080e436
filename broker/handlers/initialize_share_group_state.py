"""InitializeShareGroupState (key 83), v0: the share group coordinator asks the share coordinator to create or
reset share-partitions' state: per (group, topic id, partition) a new state epoch and start offset (-1: chosen
when the partition's leader loads it), no in-flight batches (a ShareSnapshot in ``__share_group_state``).
Per-partition errors: FENCED_STATE_EPOCH (the stored state epoch is newer), UNKNOWN_TOPIC_OR_PARTITION,
INVALID_REQUEST (negative partition), NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE
(the key's ``__share_group_state`` partition is not loaded here), REQUEST_TIMED_OUT. Needs ClusterAction on the
cluster (else CLUSTER_AUTHORIZATION_FAILED); an empty group id is INVALID_REQUEST (``_share_state``).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse,
)

from ._share_state import fan_out

API_KEY: Final = ApiKey.INITIALIZE_SHARE_GROUP_STATE
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: InitializeShareGroupStateRequest) -> InitializeShareGroupStateResponse:
    Resp = _API.Response
    Result = Resp.InitializeStateResult
    Part = Result.PartitionResult
    coordinator = ctx.services.share_coordinator

    def error(partition: int, code: ErrorCode, message: str | None) -> Any:
        return Part(partition=partition, error_code=code, error_message=message)

    async def call(topic_id: uuid.UUID, p: Any) -> Any:
        code, message = await coordinator.initialize(
            request.group_id, topic_id, p.partition, p.state_epoch, p.start_offset
        )
        return error(p.partition, code, message)

    results = await fan_out(ctx, request, lambda t, parts: Result(topic_id=t, partitions=parts), call, error)
    return Resp(results=results)
