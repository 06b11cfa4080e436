"""ListGroups (key 16), v0-5: the groups this broker coordinates (clients ask every broker), with their
protocol type; v4+ their state and the ``states_filter`` (case-insensitive, as Kafka); v5+ their type
(always "classic") and the ``types_filter``. Groups that only committed offsets are listed Empty.
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
    if types and "classic" not in types:
        groups = []
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        groups = [g for g in groups if group_authorized(ctx, AclOperation.DESCRIBE, g[0])]
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        groups=[
            Resp.ListedGroup(group_id=gid, protocol_type=ptype, group_state=state, group_type="classic")
            for gid, ptype, state in groups
            if not states or state.lower() in states
        ],
    )
