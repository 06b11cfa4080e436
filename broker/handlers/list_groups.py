"""ListGroups (key 16), v0-5: the groups this broker coordinates (clients ask every broker), classic and KIP-848
consumer groups alike, with their protocol type ("consumer" for consumer groups); v4+ their state and the
``states_filter`` (case-insensitive, as Kafka); v5+ their type ("classic" or "consumer") and the
``types_filter`` (case-insensitive; an unknown type matches nothing). Groups that only committed offsets are
listed as Empty classic groups.
Authorization: a principal with DESCRIBE on the cluster sees every group; any other sees, silently, only the
groups it may DESCRIBE (Kafka's ``handleListGroupsRequest``).
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.LIST_GROUPS
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    try:
        groups = coordinator(ctx).list_groups()
    except GroupError as e:
        return Resp(throttle_time_ms=0, error_code=e.error_code, groups=[])
    states = {s.lower() for s in request.states_filter} if ctx.version >= 4 else set()
    types = {t.lower() for t in request.types_filter} if ctx.version >= 5 else set()
    groups = [g for g in groups if (not states or g[2].lower() in states) and (not types or g[3] in types)]
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        groups = [g for g in groups if group_authorized(ctx, AclOperation.DESCRIBE, g[0])]
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        groups=[
            Resp.ListedGroup(group_id=gid, protocol_type=ptype, group_state=state, group_type=gtype)
            for gid, ptype, state, gtype in groups
        ],
    )
