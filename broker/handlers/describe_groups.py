"""DescribeGroups (key 15), v0-5: state, protocol and members of groups this broker coordinates; member
metadata and assignment only when the group is Stable (as Kafka: they are being replaced during a
rebalance). An unknown group is described as Dead with no error (as Kafka); groups coordinated elsewhere
get NOT_COORDINATOR. Gaps: ``authorized_operations`` is not computed (no ACLs): always the "not asked"
sentinel.
"""

from __future__ import annotations

from broker.coordinator.group import GroupError, GroupState
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ._groups import coordinator

API_KEY = ApiKey.DESCRIBE_GROUPS
VERSIONS = (0, 5)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Described = Resp.DescribedGroup
DescribedMember = Described.DescribedGroupMember


def _describe(ctx, group_id: str):
    try:
        group = coordinator(ctx).describe_group(group_id)
    except GroupError as e:
        return Described(error_code=e.error_code, group_id=group_id, group_state="", protocol_type="", protocol_data="")
    if group is None:
        return Described(
            error_code=ErrorCode.NONE, group_id=group_id, group_state=GroupState.DEAD.value, protocol_type="",
            protocol_data="",
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
    return Resp(throttle_time_ms=0, groups=[_describe(ctx, g) for g in request.groups])
