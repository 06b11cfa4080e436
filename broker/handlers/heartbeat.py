"""Heartbeat (key 12), v0-4: keeps a member's session alive. REBALANCE_IN_PROGRESS tells it to rejoin;
UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID (v3+ static members), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS as Kafka. Authorization: READ on the group, checked first (else
GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.heartbeat import HeartbeatRequest, HeartbeatResponse
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY: Final = ApiKey.HEARTBEAT  # Final: a literal key, so _API is typed by the stub (apis/heartbeat.pyi)
VERSIONS = (0, 4)
_API = API_BY_KEY[API_KEY]


async def handle(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _API.Response(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    try:
        coordinator(ctx).heartbeat(
            request.group_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            generation=request.generation_id,
        )
    except GroupError as e:
        return _API.Response(throttle_time_ms=0, error_code=e.error_code)
    return _API.Response(throttle_time_ms=0, error_code=ErrorCode.NONE)
