"""ShareGroupDescribe (key 77), v1: KIP-932 share groups as ``kafka-share-groups --describe`` and Kafka 4.4's
admin client read them: state (Empty, Stable), group epoch, assignment epoch, the assignor ("simple") and per
member its epoch, client, rack, subscription and assignment (topic id, name and partitions; partitions of
deleted topics left out). Per group errors: INVALID_GROUP_ID (empty id), GROUP_ID_NOT_FOUND ("Group <id> not
found." / "Group <id> is not a share group."), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS;
UNSUPPORTED_VERSION for every group when ``group.share.enable`` is false.

Authorization: DESCRIBE on each group, else its GROUP_AUTHORIZATION_FAILED; a group whose assignments name a
topic the principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED (as Kafka). With
``include_authorized_operations`` a described group carries the principal's authorized-operations bitfield,
otherwise the "not asked" sentinel -2147483648.
"""

from __future__ import annotations

from typing import Any, Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.share_group_describe import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, describe_error, described_assignment, described_group, group_authorized

API_KEY: Final = ApiKey.SHARE_GROUP_DESCRIBE
VERSIONS = (1, 1)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Described = Resp.DescribedGroup
Member = Described.Member
Assignment = Member.Assignment
TopicPartitions = Assignment.TopicPartitions


def _error(group_id: str, code: ErrorCode, message: str | None = None) -> Any:
    return describe_error(Described, group_id, code, message)


def _describe(ctx: RequestContext, group_id: str, with_operations: bool) -> Any:
    if not group_authorized(ctx, AclOperation.DESCRIBE, group_id):
        return _error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    gc = coordinator(ctx)
    try:
        group = gc.describe_share_group(group_id)
    except GroupError as e:
        return _error(group_id, e.error_code, str(e) or None)
    d = group.describe(gc.topics_view().topic_name)
    topics = {t.topic_name for m in d.members for t in m.assignment}
    members = [
        Member(
            member_id=m.member_id,
            rack_id=m.rack_id,
            member_epoch=m.member_epoch,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=list(m.subscribed_topic_names),
            assignment=described_assignment(Assignment, m.assignment),
        )
        for m in d.members
    ]
    return described_group(ctx, Described, group_id, d, members, topics, with_operations)


async def handle(ctx: RequestContext, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    if not coordinator(ctx).share_groups_enabled:
        message = "Share groups are not enabled on this broker."
        return Resp(
            throttle_time_ms=0, groups=[_error(g, ErrorCode.UNSUPPORTED_VERSION, message) for g in request.group_ids]
        )
    with_operations = request.include_authorized_operations
    return Resp(throttle_time_ms=0, groups=[_describe(ctx, g, with_operations) for g in request.group_ids])
