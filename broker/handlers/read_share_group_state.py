"""ReadShareGroupState (key 84), v0: a share-partition leader reads the state it starts from: state epoch, start
offset and state batches. A leader epoch newer than the stored one is recorded first (a ShareUpdate), so that
writes of the previous leader are fenced. Per-partition errors: INVALID_REQUEST (uninitialized share-partition,
Kafka's "Read operation on uninitialized share partition not allowed.", or negative partition),
FENCED_LEADER_EPOCH (older than the stored one), UNKNOWN_TOPIC_OR_PARTITION, NOT_COORDINATOR /
COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT; an error answers state epoch 0,
start offset -1 and no batches. Needs ClusterAction on the cluster (else CLUSTER_AUTHORIZATION_FAILED); an
empty group id is INVALID_REQUEST (``_share_state``).
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from broker.api import RequestContext
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.read_share_group_state import ReadShareGroupStateRequest, ReadShareGroupStateResponse

from ._share_state import fan_out

API_KEY: Final = ApiKey.READ_SHARE_GROUP_STATE
VERSIONS = (0, 0)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: ReadShareGroupStateRequest) -> ReadShareGroupStateResponse:
    Resp = _API.Response
    Result = Resp.ReadStateResult
    Part = Result.PartitionResult
    coordinator = ctx.services.share_coordinator

    def error(partition: int, code: ErrorCode, message: str | None) -> Any:
        return Part(
            partition=partition,
            error_code=code,
            error_message=message,
            state_epoch=0,
            start_offset=-1,
            state_batches=[],
        )

    async def call(topic_id: uuid.UUID, p: Any) -> Any:
        code, message, state = await coordinator.read(request.group_id, topic_id, p.partition, p.leader_epoch)
        if code != ErrorCode.NONE or state is None:
            return error(p.partition, code, message)
        return Part(
            partition=p.partition,
            error_code=ErrorCode.NONE,
            error_message=None,
            state_epoch=state.state_epoch,
            start_offset=state.start_offset,
            state_batches=[
                Part.StateBatch(
                    first_offset=b.first_offset,
                    last_offset=b.last_offset,
                    delivery_state=b.delivery_state,
                    delivery_count=b.delivery_count,
                )
                for b in state.state_batches
            ],
        )

    results = await fan_out(ctx, request, lambda t, parts: Result(topic_id=t, partitions=parts), call, error)
    return Resp(results=results)
