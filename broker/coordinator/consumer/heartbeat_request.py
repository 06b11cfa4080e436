"""ConsumerGroupHeartbeat's request checks (Kafka's ``throwIfConsumerGroupHeartbeatRequestIsInvalid``) and the
partitions a request reports, for ``ConsumerGroup.heartbeat``. Pure.

INVALID_REQUEST, with Kafka's messages: an empty member id (any version except a v0 join: v0 lets the
coordinator generate it, v1+ clients generate their own, KIP-1082), an empty instance or rack id; on a join
(epoch 0) a missing rebalance timeout, non-empty or null topic partitions, or neither topic names nor a regex;
on a static leave (epoch -2) a null instance id; any epoch below -2. UNSUPPORTED_ASSIGNOR for a server assignor
the group does not have.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

from ..group import GroupError
from .group_state import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH


def validate_heartbeat_request(req: ConsumerGroupHeartbeatRequest, version: int, assignors: Collection[str]) -> None:
    """Raise ``GroupError`` when ``req`` (of API ``version``) is invalid (see the module docstring)."""

    def invalid(message: str) -> GroupError:
        return GroupError(ErrorCode.INVALID_REQUEST, message)

    epoch = req.member_epoch
    if (version >= 1 or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH) and req.member_id == "":
        raise invalid("MemberId can't be empty.")
    if req.instance_id == "":
        raise invalid("InstanceId can't be empty.")
    if req.rack_id == "":
        raise invalid("RackId can't be empty.")
    if epoch == 0:
        if req.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if req.topic_partitions is None or req.topic_partitions:
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if req.subscribed_topic_names is None and req.subscribed_topic_regex is None:
            raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            raise invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid("MemberEpoch is invalid.")
    if req.server_assignor is not None and req.server_assignor not in assignors:
        raise GroupError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {req.server_assignor} is not supported. Supported assignors: {', '.join(assignors)}.",
        )


def owned_partitions(
    topic_partitions: Iterable[ConsumerGroupHeartbeatRequest.TopicPartitions] | None,
) -> dict[uuid.UUID, frozenset[int]] | None:
    """The partitions a heartbeat reports it owns, by topic id; None when it did not report them."""
    if topic_partitions is None:
        return None
    out: dict[uuid.UUID, set[int]] = {}
    for tp in topic_partitions:
        out.setdefault(tp.topic_id, set()).update(tp.partitions)
    return {t: frozenset(p) for t, p in out.items()}
