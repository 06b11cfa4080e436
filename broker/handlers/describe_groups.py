"""DescribeGroups (key 15), v0-6: state, protocol and members of groups this broker coordinates; member
metadata and assignment only when the group is Stable (as Kafka: they are being replaced during a
rebalance). An unknown group is described as Dead with no error up to v5 and, from v6 (KIP-1043), as Dead with
GROUP_ID_NOT_FOUND and the message "Group <id> not found." ("Group <id> is not a classic group." for a share group)
(as Kafka); groups coordinated elsewhere get
NOT_COORDINATOR.

Authorization: DESCRIBE on each group, else that group's GROUP_AUTHORIZATION_FAILED with empty state,
protocol and members (Kafka's ``DescribeGroupsResponse.forError``). v3+ with ``include_authorized_operations``:
a described group (no error) carries the principal's authorized-operations bitfield on it (bit ``1 << op`` for
READ, DESCRIBE, DELETE); otherwise the "not asked" sentinel -2147483648.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError, GroupState
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

from ._groups import coordinator, group_authorized

API_KEY = ApiKey.DESCRIBE_GROUPS
VERSIONS = (0, 6)
GROUP_ID_NOT_FOUND_FROM = 6
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Described = Resp.DescribedGroup
DescribedMember = Described.DescribedGroupMember


def _describe(ctx, group_id: str, with_operations: bool):
    if not group_authorized(ctx, AclOperation.DESCRIBE, group_id):
        code = ErrorCode.GROUP_AUTHORIZATION_FAILED
        return Described(error_code=code, group_id=group_id, group_state="", protocol_type="", protocol_data="")
    described = _describe_authorized(ctx, group_id, ctx.version)
    if with_operations and described.error_code == ErrorCode.NONE:
        described.authorized_operations = ctx.authorized_operations(ResourceType.GROUP, group_id)
    return described


def _describe_authorized(ctx, group_id: str, version: int):
    try:
        group = coordinator(ctx).describe_group(group_id)
    except GroupError as e:
        return Described(error_code=e.error_code, group_id=group_id, group_state="", protocol_type="", protocol_data="")
    if group is None:
        missing = version >= GROUP_ID_NOT_FOUND_FROM
        share = coordinator(ctx).is_share_group(group_id)  # Kafka 4.4 describes a share group as not classic
        message = f"Group {group_id} is not a classic group." if share else f"Group {group_id} not found."
        return Described(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND if missing else ErrorCode.NONE,
            error_message=message if missing else None,
            group_id=group_id, group_state=GroupState.DEAD.value, protocol_type="", protocol_data="",
        )  # fmt: skip
    stable = group.state is GroupState.STABLE
    members = [
        DescribedMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            member_metadata=m.metadata_for(group.protocol_name) if stable else b"",
            member_assignment=m.assignment if stable else b"",
        )
        for m in group.members.values()
    ]
    return Described(
        error_code=ErrorCode.NONE,
        group_id=group_id,
        group_state=group.state.value,
        protocol_type=group.protocol_type or "",
        protocol_data=(group.protocol_name or "") if stable else "",
        members=members,
    )


async def handle(ctx, request):
    with_operations = ctx.version >= 3 and request.include_authorized_operations
    return Resp(throttle_time_ms=0, groups=[_describe(ctx, g, with_operations) for g in request.groups])
