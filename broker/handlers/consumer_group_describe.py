"""ConsumerGroupDescribe (key 69), v0-1: KIP-848 consumer groups as ``kafka-consumer-groups --describe`` and
Kafka 4.x's admin client read them: state (Empty, Assigning, Reconciling, Stable), group epoch, target assignment
epoch, the assignor in use, and per member its epoch, subscription (names and regex), current and target
assignment (topic id, name and partitions; partitions of deleted topics left out). v1 adds ``member_type`` (1
for a member of the consumer protocol). Per group errors: INVALID_GROUP_ID (empty id), GROUP_ID_NOT_FOUND
(unknown, or a classic group, with Kafka's messages), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS; UNSUPPORTED_VERSION
for every group when ``group.coordinator.rebalance.protocols`` lacks ``consumer``.

Authorization: DESCRIBE on each group, else its GROUP_AUTHORIZATION_FAILED; a group whose assignments name a
topic the principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED (as Kafka 4.x). With
``include_authorized_operations`` a described group carries the principal's authorized-operations bitfield on
it, otherwise the "not asked" sentinel -2147483648.
"""

from __future__ import annotations

from typing import Final

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.protocol.apis.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from spark_kafkalog.security.acl import AclOperation

from ._groups import coordinator, describe_error, described_assignment, described_group, group_authorized

API_KEY: Final = ApiKey.CONSUMER_GROUP_DESCRIBE
VERSIONS = (0, 1)
_API = API_BY_KEY[API_KEY]
Resp = _API.Response
Described = Resp.DescribedGroup
Member = Described.Member
Assignment = Member.Assignment
TopicPartitions = Assignment.TopicPartitions


def _error(group_id: str, code: ErrorCode, message: str | None = None):
    return describe_error(Described, group_id, code, message)


def _assignment(described) -> ConsumerGroupDescribeResponse.DescribedGroup.Member.Assignment:
    return described_assignment(Assignment, described)


def _describe(ctx: RequestContext, group_id: str, with_operations: bool):
    if not group_authorized(ctx, AclOperation.DESCRIBE, group_id):
        return _error(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    gc = coordinator(ctx)
    try:
        group = gc.consumer_group(group_id)
    except GroupError as e:
        return _error(group_id, e.error_code, str(e) or None)
    d = group.describe(gc.topics_view().topic_name)
    topics = {t.topic_name for m in d.members for t in (*m.assignment, *m.target_assignment)}
    members = [
        Member(
            member_id=m.member_id,
            instance_id=m.instance_id,
            rack_id=m.rack_id,
            member_epoch=m.member_epoch,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=list(m.subscribed_topic_names),
            subscribed_topic_regex=m.subscribed_topic_regex,
            assignment=_assignment(m.assignment),
            target_assignment=_assignment(m.target_assignment),
            member_type=m.member_type,
        )
        for m in d.members
    ]
    return described_group(ctx, Described, group_id, d, members, topics, with_operations)


async def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    if not coordinator(ctx).consumer_protocol_enabled:
        message = "The consumer group protocol is not enabled on this broker."
        groups = [_error(g, ErrorCode.UNSUPPORTED_VERSION, message) for g in request.group_ids]
        return Resp(throttle_time_ms=0, groups=groups)
    with_operations = request.include_authorized_operations
    return Resp(throttle_time_ms=0, groups=[_describe(ctx, g, with_operations) for g in request.group_ids])
