"""LeaveGroup (key 13), v0-5: members leave at once (the rest rebalance without waiting for their session
timeout). v0-2 name one member id; v3+ a batch of members (by member id, or by group_instance_id with an
empty member id) with an error each (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID). v5+ carry a ``reason`` per
member (logged at debug, as Kafka puts it into the rebalance reason). A KIP-848 consumer group fences each named
member (classic or not, as Kafka) and appends its records before answering. Authorization: READ on the group,
checked first (else the top-level GROUP_AUTHORIZATION_FAILED and no members).
"""

from __future__ import annotations

from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.LEAVE_GROUP
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    Resp = _API.Response
    if not group_authorized(ctx, AclOperation.READ, request.group_id):
        return Resp(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, members=[])
    if ctx.version >= 3:
        members = [(m.member_id, m.group_instance_id) for m in request.members]
        for m in request.members:
            if ctx.version >= 5 and m.reason:
                ctx.log.debug("member %r leaves group %s: %s", m.member_id, request.group_id, m.reason)
    else:
        members = [(request.member_id, None)]
    try:
        gc = coordinator(ctx)
        gc._check(request.group_id)
        codes = await gc.classic_leave_consumer_group(request.group_id, members)
        if codes is None:
            codes = gc.leave_group(request.group_id, members)
    except GroupError as e:
        return Resp(throttle_time_ms=0, error_code=e.error_code, members=[])
    if ctx.version < 3:
        return Resp(throttle_time_ms=0, error_code=codes[0], members=[])
    return Resp(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        members=[
            Resp.MemberResponse(member_id=mid, group_instance_id=iid, error_code=code)
            for (mid, iid), code in zip(members, codes, strict=True)
        ],
    )
