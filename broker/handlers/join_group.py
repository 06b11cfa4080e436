"""JoinGroup (key 11), v0-9: join a classic group and wait (long poll) until its rebalance completes
(every member rejoined, or the rebalance timeout passed). v0 has no rebalance timeout: the session timeout
is used. v4+ with an empty member id answers MEMBER_ID_REQUIRED with the id to rejoin with (unless the
member is static, v5+ ``group_instance_id``). The leader gets every member's metadata for the protocol
every member supports (Kafka's vote). Errors: INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS. v8+ carry the client's ``reason`` for joining (logged at debug, as Kafka
puts it into the rebalance reason); v9 answers ``skip_assignment``, always false here. Gaps: a restarted
static member triggers a rebalance (Kafka avoids it when its protocols are unchanged, and answers such a
leader v9+ ``skip_assignment`` = true).
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import client_host, client_id, coordinator

API_KEY = ApiKey.JOIN_GROUP
VERSIONS = (0, 9)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    if ctx.version >= 8 and request.reason:
        ctx.log.debug("member %r joins group %s: %s", request.member_id, request.group_id, request.reason)
    try:
        rebalance_timeout = request.rebalance_timeout_ms if ctx.version >= 1 else request.session_timeout_ms
        result = await coordinator(ctx).join_group(
            request.group_id,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            client_id=client_id(ctx),
            client_host=client_host(ctx),
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout,
            protocol_type=request.protocol_type,
            protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
            require_known_member_id=ctx.version >= 4,
            disconnected=ctx.disconnected,
        )
    except GroupError as e:
        return Resp(
            throttle_time_ms=0,
            error_code=e.error_code,
            generation_id=-1,
            protocol_type=None,
            protocol_name="" if ctx.version < 7 else None,
            leader="",
            member_id=e.member_id or request.member_id,
            members=[],
        )
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        generation_id=result.generation,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name or "",
        leader=result.leader_id,
        skip_assignment=False,
        member_id=result.member_id,
        members=[
            Resp.JoinGroupResponseMember(member_id=mid, group_instance_id=iid, metadata=meta)
            for mid, iid, meta in result.members
        ],
    )
