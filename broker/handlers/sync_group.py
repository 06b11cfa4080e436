"""SyncGroup (key 14), v0-5: the leader hands in every member's assignment, which completes the rebalance
(the group's metadata with the assignments is written to ``__consumer_offsets`` first, as Kafka's
``storeGroup``); followers wait for it. v5 checks and echoes protocol_type/protocol_name
(INCONSISTENT_GROUP_PROTOCOL on a mismatch). Errors: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
REBALANCE_IN_PROGRESS (rejoin), FENCED_INSTANCE_ID, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.

Authorization: READ on the group (else GROUP_AUTHORIZATION_FAILED), checked after v5's mandatory
protocol_type/protocol_name (null: INCONSISTENT_GROUP_PROTOCOL), as Kafka orders them.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.SYNC_GROUP
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    if ctx.version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment=b"")
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment=b"")
    try:
        assignment, ptype, pname = await coordinator(ctx).sync_group(
            request.group_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            generation=request.generation_id,
            assignments={a.member_id: bytes(a.assignment) for a in request.assignments},
            protocol_type=request.protocol_type if ctx.version >= 5 else None,
            protocol_name=request.protocol_name if ctx.version >= 5 else None,
            disconnected=ctx.disconnected,
        )
    except GroupError as e:
        return Resp(throttle_time_ms=0, error_code=e.error_code, assignment=b"")
    return Resp(
        throttle_time_ms=0, error_code=ErrorCode.NONE, protocol_type=ptype, protocol_name=pname, assignment=assignment
    )
