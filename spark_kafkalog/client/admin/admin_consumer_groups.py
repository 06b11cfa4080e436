"""Describe consumer groups of both group protocols, as Kafka's ``AdminClient.describeConsumerGroups`` (KIP-848).

ConsumerGroupDescribe (key 69, v0-1) goes to the group's coordinator first: a consumer group comes back with its
state, group epoch, target assignment epoch, server-side assignor and, per member, its epoch, subscription (names
and/or regex), current and target assignment (topic names from the answer) and, from v1, whether it joined with
the consumer or the classic protocol (a classic member of a consumer group during an online migration). A group the
coordinator does not know as a consumer group (GROUP_ID_NOT_FOUND: a classic group, or none at all) or a coordinator
without API 69 is described with DescribeGroups, each member's assignment decoded from its classic
ConsumerProtocolAssignment (``type`` "classic"; a group nobody knows is "Dead" with no members, as DescribeGroups
answers). Other errors raise as ``GroupAdmin``'s calls do (coordinator moves retried).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.admin.group_requests import GroupDescription, GroupErrorFactory, group_error
from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

__all__ = [
    "ConsumerGroupDescription",
    "ConsumerGroupMember",
    "classic_description",
    "consumer_group_describe_answer",
    "consumer_group_describe_request",
    "dead_group",
    "describe_consumer_groups",
    "is_classic_or_unknown",
]

_MEMBER_TYPES = {0: "classic", 1: "consumer"}  # ConsumerGroupDescribe v1 member_type (KIP-1099); -1 unknown


@dataclass(frozen=True)
class ConsumerGroupMember:
    """One member. ``member_epoch``, ``rack_id``, the subscription and ``target_assignment`` come from
    ConsumerGroupDescribe only (a classic group's members keep the defaults)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: tuple[TopicPartition, ...]
    member_type: str = "unknown"  # "consumer" or "classic": the protocol the member joined with
    member_epoch: int = -1
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    target_assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupDescription:
    """``type`` is "consumer" (KIP-848) or "classic"; ``assignor`` the server-side assignor of a consumer group or
    the protocol (assignor) name a classic group chose; the epochs are -1 for a classic group."""

    group_id: str
    type: str
    state: str
    assignor: str
    members: tuple[ConsumerGroupMember, ...] = field(default=())
    coordinator: int = -1
    group_epoch: int = -1
    assignment_epoch: int = -1


def describe_consumer_groups(groups: GroupAdmin, group_ids: Iterable[str]) -> dict[str, ConsumerGroupDescription]:
    """Each group's description (see the module docstring), in the order asked."""
    return {group_id: _describe(groups, group_id) for group_id in dict.fromkeys(group_ids)}


def _describe(groups: GroupAdmin, group_id: str) -> ConsumerGroupDescription:
    def check(response: Any, version: int) -> ConsumerGroupDescription:
        return consumer_group_describe_answer(response, version, group_id, groups.coordinator(group_id), groups._error)

    try:
        return groups._group_call(
            group_id,
            ApiKey.CONSUMER_GROUP_DESCRIBE,
            lambda version: consumer_group_describe_request(group_id),
            check,
            "ConsumerGroupDescribe",
        )
    except KafkaClientError as e:
        if not is_classic_or_unknown(e):
            raise
    try:
        return classic_description(groups.describe_groups([group_id])[group_id])
    except KafkaClientError as e:  # DescribeGroups v6 (Kafka 4.x): GROUP_ID_NOT_FOUND where v0-5 answer Dead
        if e.error_code != ErrorCode.GROUP_ID_NOT_FOUND:
            raise
    return dead_group(group_id, groups.coordinator(group_id))


# the pure parts, shared with the asyncio admin client (``client.aio.admin``) -----------------------------------
def consumer_group_describe_request(group_id: str) -> Any:
    """The ConsumerGroupDescribe body for one group."""
    return API_BY_KEY[ApiKey.CONSUMER_GROUP_DESCRIBE].Request(group_ids=[group_id], include_authorized_operations=False)


def consumer_group_describe_answer(
    response: Any, version: int, group_id: str, coordinator: int, error: GroupErrorFactory = group_error
) -> ConsumerGroupDescription:
    """The description of a ConsumerGroupDescribe answer for one group; raises (``error``) its error."""
    (g,) = response.groups
    if g.error_code != ErrorCode.NONE:
        raise error(g.error_code, "ConsumerGroupDescribe", group_id, g.error_message)
    return ConsumerGroupDescription(
        g.group_id,
        "consumer",
        g.group_state,
        g.assignor_name,
        tuple(_member(m, version) for m in g.members),
        coordinator,
        g.group_epoch,
        g.assignment_epoch,
    )


def is_classic_or_unknown(error: KafkaClientError) -> bool:
    """ConsumerGroupDescribe failed because the group is not a consumer group (or the API is not served):
    describe it with DescribeGroups instead."""
    return error.error_code in (ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.UNSUPPORTED_VERSION)


def dead_group(group_id: str, coordinator: int) -> ConsumerGroupDescription:
    """A group nobody knows, as DescribeGroups v0-5 describe it: classic, Dead, no members."""
    return ConsumerGroupDescription(group_id, "classic", "Dead", "", (), coordinator)


def _partitions(assignment: Any) -> tuple[TopicPartition, ...]:
    return tuple(sorted(TopicPartition(t.topic_name, p) for t in assignment.topic_partitions for p in t.partitions))


def _member(m: Any, version: int) -> ConsumerGroupMember:
    return ConsumerGroupMember(
        m.member_id,
        m.instance_id,
        m.client_id,
        m.client_host,
        _partitions(m.assignment),
        _MEMBER_TYPES.get(m.member_type, "unknown") if version >= 1 else "consumer",
        m.member_epoch,
        m.rack_id,
        tuple(m.subscribed_topic_names),
        m.subscribed_topic_regex or None,  # Kafka answers "" for a member without a regex
        _partitions(m.target_assignment),
    )


def classic_description(d: GroupDescription) -> ConsumerGroupDescription:
    """A classic group's ``GroupDescription`` as a ``ConsumerGroupDescription`` (assignments decoded)."""
    from spark_kafkalog.client.consumer.consumer_protocol import decode_assignment  # the consumer imports admin

    members = []
    for m in d.members:
        assigned: tuple[TopicPartition, ...] = ()
        if d.protocol_type == "consumer" and m.assignment:
            assigned = tuple(sorted(decode_assignment(m.assignment).partitions))
        members.append(ConsumerGroupMember(m.member_id, m.group_instance_id, m.client_id, m.host, assigned, "classic"))
    return ConsumerGroupDescription(d.group_id, "classic", d.state, d.protocol, tuple(members), d.coordinator)
