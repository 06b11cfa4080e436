"""What ShareFetch (78) and ShareAcknowledge (79) share: acknowledgement validation, per-partition checks, leaders.

``validate_acks`` applies Kafka's ``validateAcknowledgementBatches`` to one partition's batches: first offset
<= last offset, batches in ascending order without overlap, ``acknowledge_types`` of one entry or one per
offset, each 0 (gap), 1 (accept), 2 (release), 3 (reject) or, in a v2 request with ``is_renew_ack``, 4
(renew); anything else is INVALID_REQUEST for that partition. ``partition_error`` checks a (topic id,
partition) in Kafka's order: an unknown topic id UNKNOWN_TOPIC_ID, no Read on the topic
TOPIC_AUTHORIZATION_FAILED, a partition the topic does not have UNKNOWN_TOPIC_OR_PARTITION. ``leader_of`` and
``node_endpoints`` fill ``current_leader`` and the answer's ``node_endpoints`` for NOT_LEADER_OR_FOLLOWER
(KIP-951). ``request_refused`` is what both answer before anything else; ``acknowledge_partition`` applies one partition's
acknowledgements (checked first) for both.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.security.acl import AclOperation, ResourceType

RENEW = 4
_MAX_TYPE = 3


def validate_acks(batches: Sequence[Any], *, renew_allowed: bool) -> str | None:
    """None when ``batches`` are well formed, else why not (the partition answers INVALID_REQUEST)."""
    previous_last = -1
    top = RENEW if renew_allowed else _MAX_TYPE
    for b in batches:
        if b.first_offset < 0 or b.first_offset > b.last_offset:
            return f"acknowledgement batch {b.first_offset}-{b.last_offset} is not a range of offsets"
        if b.first_offset <= previous_last:
            return f"acknowledgement batch at {b.first_offset} overlaps or precedes the previous one"
        previous_last = b.last_offset
        types = list(b.acknowledge_types)
        if len(types) != 1 and len(types) != b.last_offset - b.first_offset + 1:
            return f"acknowledgement batch {b.first_offset}-{b.last_offset} has {len(types)} acknowledge types"
        for t in types:
            if t < 0 or t > top:
                return f"acknowledge type {t} is not valid here"
    return None


def ack_batches(batches: Sequence[Any]) -> list[Any]:
    """The share partition's ``AckBatch``es of a request's acknowledgement batches."""
    from broker.share.share_partition import AckBatch

    return [AckBatch(b.first_offset, b.last_offset, tuple(b.acknowledge_types)) for b in batches]


def topic_name(ctx: Any, topic_id: uuid.UUID) -> str | None:
    return ctx.services.metadata.topic_by_id(topic_id)


def partition_error(ctx: Any, topic: str | None, partition: int, readable: dict[str, bool]) -> ErrorCode:
    """The error a partition answers before its share partition is looked at (module docstring)."""
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_ID
    allowed = readable.get(topic)
    if allowed is None:
        allowed = readable[topic] = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic)
    if not allowed:
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    t = ctx.services.metadata.topics.get(topic)
    if t is None or partition not in t.replicas:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return ErrorCode.NONE


def leader_of(ctx: Any, topic: str | None, partition: int) -> tuple[int, int]:
    """(leader id, leader epoch) of the partition as this broker knows it, else (-1, -1)."""
    if topic is None:
        return -1, -1
    st = ctx.services.metadata.partition_state(topic, partition)
    return (-1, -1) if st is None else (st.leader, st.leader_epoch)


def node_endpoints(ctx: Any, node_ids: set[int], make: Any) -> list[Any]:
    """``make(node_id=, host=, port=, rack=)`` for each known broker of ``node_ids`` on the request's listener."""
    brokers = ctx.services.metadata.brokers
    out = []
    for node_id in sorted(n for n in node_ids if n >= 0):
        info = brokers.get(node_id)
        ep = info.listener_endpoint(ctx.listener) if info is not None else None
        if ep is not None:
            out.append(make(node_id=node_id, host=ep[0], port=ep[1], rack=info.rack))
    return out


def group_denied(ctx: Any, group_id: str | None) -> bool:
    return not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id or "")


def request_refused(ctx: Any, request: Any, api_name: str) -> tuple[ErrorCode, str | None] | None:
    """The (error, message) a ShareFetch / ShareAcknowledge answers at once, in Kafka's order: share groups not
    enabled UNSUPPORTED_VERSION, no Read on the group GROUP_AUTHORIZATION_FAILED, no member id INVALID_REQUEST;
    None when it may go on."""
    if not ctx.services.group_coordinator.share_groups_enabled:
        return ErrorCode.UNSUPPORTED_VERSION, "Share groups are not enabled on this broker."
    if group_denied(ctx, request.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
    if not request.member_id:
        return ErrorCode.INVALID_REQUEST, f"{api_name} needs a member id"
    return None


async def acknowledge_partition(
    ctx: Any,
    group_id: str,
    member_id: str,
    topic_id: uuid.UUID,
    topic: str | None,
    partition: Any,
    readable: dict[str, bool],
    renew: bool,
) -> tuple[ErrorCode, str | None]:
    """(error, message) of one request partition's ``acknowledgement_batches`` (ShareAcknowledge, or a ShareFetch
    that carries some): ``partition_error``, then ``validate_acks`` (INVALID_REQUEST), then the share partition
    manager's ``acknowledge``."""
    code = partition_error(ctx, topic, partition.partition_index, readable)
    message = None
    if code == ErrorCode.NONE:
        message = validate_acks(partition.acknowledgement_batches, renew_allowed=renew)
        code = ErrorCode.INVALID_REQUEST if message is not None else code
    if code == ErrorCode.NONE:
        assert topic is not None
        batches = ack_batches(partition.acknowledgement_batches)
        mgr = ctx.services.share_partitions
        code, message = await mgr.acknowledge(group_id, member_id, topic, topic_id, partition.partition_index, batches)
    return code, message
