"""DeleteShareGroupState (key 86), v0: the share group coordinator deletes share-partitions' state (group
deletion, DeleteShareGroupOffsets): tombstones in ``__share_group_state``; a share-partition without state is
NONE. Per-partition errors: INVALID_REQUEST (negative partition), NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS
/ COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT. Needs ClusterAction on the cluster (else
CLUSTER_AUTHORIZATION_FAILED); an empty group id is INVALID_REQUEST (``_share_state``).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.delete_share_group_state import (
    DeleteShareGroupStateRequest,
    DeleteShareGroupStateResponse,
)

from ._share_state import fan_out

API_KEY: Final = ApiKey.DELETE_SHARE_GROUP_STATE
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: DeleteShareGroupStateRequest) -> DeleteShareGroupStateResponse:
    Resp = _API.Response
    Result = Resp.DeleteStateResult
    Part = Result.PartitionResult
    coordinator = ctx.services.share_coordinator

    def error(partition: int, code: ErrorCode, message: str | None) -> Any:
        return Part(partition=partition, error_code=code, error_message=message)

    async def call(topic_id: uuid.UUID, p: Any) -> Any:
        code, message = await coordinator.delete(request.group_id, topic_id, p.partition)
        return error(p.partition, code, message)

    results = await fan_out(ctx, request, lambda t, parts: Result(topic_id=t, partitions=parts), call, error)
    return Resp(results=results)
