"""JoinGroup (key 11), v0-9: join a classic group and wait (long poll) until its rebalance completes
(every member rejoined, or the rebalance timeout passed). v0 has no rebalance timeout: the session timeout
is used. v4+ with an empty member id answers MEMBER_ID_REQUIRED with the id to rejoin with (unless the
member is static, v5+ ``group_instance_id``). The leader gets every member's metadata for the protocol
every member supports (Kafka's vote). Errors: INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS. v8+ carry the client's ``reason`` for joining (logged at debug, as Kafka
puts it into the rebalance reason). A static member restarting into a Stable group with unchanged metadata
takes over its slot without a rebalance; when it is the leader, v9+ answer ``skip_assignment`` = true (it
gets the members but must keep the current assignment, KIP-814); v0-8 answer it as Kafka does, with its
previous member id as leader and no members (so it acts as a follower; SyncGroup in the Stable group hands
it its current assignment).

A KIP-848 consumer group of the same id is deleted first when it has no members (as Kafka, so a classic group
takes its place); one with members takes the member in as a classic member (Kafka's online migration: the answer
is immediate, with the member's epoch as the generation and no leader duties; INCONSISTENT_GROUP_PROTOCOL when
``group.consumer.migration.policy`` is ``disabled``).

Authorization: READ on the group, checked first (else GROUP_AUTHORIZATION_FAILED with an empty member id and
generation -1, as Kafka's error response).
"""

from __future__ import annotations

from broker.coordinator.group import GroupError, GroupState
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import client_host, client_id, coordinator, group_authorized

API_KEY = ApiKey.JOIN_GROUP
VERSIONS = (0, 9)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    if ctx.version >= 8 and request.reason:
        ctx.log.debug("member %r joins group %s: %s", request.member_id, request.group_id, request.reason)
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return _error(ctx, ErrorCode.GROUP_AUTHORIZATION_FAILED, "")
    try:
        gc = coordinator(ctx)
        restarted_from = None  # the member id a static member restarting (no member id) had, below v9
        if ctx.version < 9 and not request.member_id and request.group_instance_id is not None:
            restarted_from = _static_member_id(gc, request.group_id, request.group_instance_id)
        rebalance_timeout = request.rebalance_timeout_ms if ctx.version >= 1 else request.session_timeout_ms
        result = await gc.join_group(
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
        return _error(ctx, e.error_code, e.member_id or request.member_id)
    kept_leader = _kept_leader(gc, request.group_id, result)
    leader = result.leader_id
    members = [
        Resp.JoinGroupResponseMember(member_id=mid, group_instance_id=iid, metadata=meta)
        for mid, iid, meta in result.members
    ]
    if kept_leader and restarted_from is not None:
        # Below v9 there is no skip_assignment: as Kafka, a restarted static leader of a group that stays Stable
        # is named by its old member id and gets no members, so it does not run its assignor for nothing.
        leader, members = restarted_from, []
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        generation_id=result.generation,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name or "",
        leader=leader,
        skip_assignment=ctx.version >= 9 and kept_leader,
        member_id=result.member_id,
        members=members,
    )


def _error(ctx, code: int, member_id: str):
    return _API.Response(
        throttle_time_ms=0,
        error_code=code,
        generation_id=-1,
        protocol_type=None,
        protocol_name="" if ctx.version < 7 else None,
        leader="",
        member_id=member_id,
        members=[],
    )


def _static_member_id(gc, group_id: str, group_instance_id: str) -> str | None:
    """The member id ``group_instance_id`` holds in the group now (None: not a member, or no such group)."""
    try:
        group = gc.describe_group(group_id)
    except GroupError:
        return None
    return None if group is None else group.static_members.get(group_instance_id)


def _kept_leader(gc, group_id: str, result) -> bool:
    """Whether ``result`` names its member leader of a group that stayed Stable: a static leader that took its
    slot back without a rebalance (a rebalance leaves the group CompletingRebalance until the leader syncs)."""
    if result.member_id != result.leader_id:
        return False
    try:
        group = gc.describe_group(group_id)
    except GroupError:
        return False
    return group is not None and group.state is GroupState.STABLE
