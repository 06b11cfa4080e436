"""What AlterShareGroupOffsets (91) and DeleteShareGroupOffsets (92) share: the empty share group they act on, and
resetting a share-partition's persisted state to a new start offset.

A reset is ``share_persister.initialize(group, topic id, partition, state epoch + 1, start offset)`` with the
state epoch one above the stored one (read with ``read_summary``): the state is replaced (no in-flight batches)
and the partition's leader, whose next write carries the older epoch, is fenced (FENCED_STATE_EPOCH) and reloads
the new state. Only partitions the group has initialized (its ShareGroupStatePartitionMetadata) are reset, so the
group coordinator never initializes them again over the reset. Event-loop only; the group's emptiness is checked
before the resets, not held during them (a member joining meanwhile starts from the reset state).
"""

from __future__ import annotations

import uuid
from typing import Any

from broker.api import RequestContext
from broker.coordinator.group import GroupError
from spark_kafkalog.protocol import ErrorCode

from ._groups import coordinator

NOT_EMPTY = "The group is not empty."


def empty_share_group(ctx: RequestContext, group_id: str) -> Any:
    """The share group to change; raises ``GroupError``: the coordinator's errors (NOT_COORDINATOR,
    COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND, INVALID_GROUP_ID), UNSUPPORTED_VERSION when share groups
    are disabled, NON_EMPTY_GROUP while it has members."""
    gc = coordinator(ctx)
    if not gc.share_groups_enabled:
        raise GroupError(ErrorCode.UNSUPPORTED_VERSION, "Share groups are not enabled on this broker.")
    group = gc.describe_share_group(group_id)
    if not group.is_empty:
        raise GroupError(ErrorCode.NON_EMPTY_GROUP, NOT_EMPTY)
    return group


async def reset_share_partition(
    ctx: RequestContext, group_id: str, topic_id: uuid.UUID, partition: int, start_offset: int
) -> tuple[ErrorCode, str | None]:
    """Replace the partition's share state with one starting at ``start_offset`` (-1: chosen again by
    ``share.auto.offset.reset`` when the leader loads it)."""
    persister = ctx.services.share_persister
    try:
        code, message, state = await persister.read_summary(group_id, topic_id, partition, -1)
        if code != ErrorCode.NONE:
            return code, message
        epoch = (state.state_epoch if state is not None else 0) + 1
        return await persister.initialize(group_id, topic_id, partition, epoch, start_offset)
    except Exception as e:  # a persister failure answers this partition only
        return ErrorCode.UNKNOWN_SERVER_ERROR, f"resetting the share state failed: {e}"
