"""``GroupCoordinatorBase``: what the parts of the ``GroupCoordinator`` share: its fields, which groups
it coordinates, the group-level check of every request, and the replicated append to ``__consumer_offsets``.

``GroupCoordinator`` (``group_coordinator``) sets the fields and puts the parts together:
``group_membership`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, session expiry) and ``group_offsets``
(OffsetCommit, TxnOffsetCommit, OffsetFetch, OffsetDelete, offset expiry, transaction markers).
Event-loop only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.log.clock import Clock
from spark_kafkalog.protocol import ErrorCode

from .group import Group, GroupError
from .internal_topic import InternalTopic
from .offset_store import OffsetStore

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.coordinator.consumer.group import ConsumerGroup
    from broker.coordinator.share.group import ShareGroup
    from broker.replication.replica_manager import ReplicaManager


class GroupCoordinatorBase:
    """The fields ``GroupCoordinator.__init__`` sets that the parts use, and the helpers they all call."""

    broker_id: int
    config: BrokerConfig
    clock: Clock
    replica_manager: ReplicaManager
    store: OffsetStore
    groups: dict[str, Group]
    consumer_groups: dict[str, ConsumerGroup]
    """KIP-848 consumer groups (``group_consumer_protocol``); a group id is in ``groups`` or here, never both."""
    share_groups: dict[str, ShareGroup]
    """KIP-932 share groups (``group_share_protocol``); a group id names one group of one type."""
    topic: InternalTopic
    _join_waiters: dict[str, dict[str, asyncio.Future]]
    _sync_waiters: dict[str, dict[str, asyncio.Future]]
    _marker_scan: dict[int, int]

    @property
    def loaded(self) -> dict[int, int]:
        """The offsets partitions coordinated here (-> their leader epoch when loaded)."""
        return self.topic.loaded

    def now(self) -> int:
        return self.clock.milliseconds()

    def partition_of(self, group_id: str) -> int:
        return self.store.partition_of(group_id)

    def coordinator_error(self, group_id: str) -> ErrorCode:
        """NONE when this broker coordinates ``group_id`` now, else the error to answer."""
        return self.topic.coordinator_error(self.partition_of(group_id))

    def _new_group(self, group_id: str) -> Group:
        return Group(
            group_id,
            initial_rebalance_delay_ms=self.config["group.initial.rebalance.delay.ms"],
            max_size=self.config["group.max.size"],
        )

    def _check(self, group_id: str) -> None:
        if not group_id:
            raise GroupError(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
        code = self.coordinator_error(group_id)
        if code != ErrorCode.NONE:
            raise GroupError(code, f"broker {self.broker_id} does not coordinate group {group_id} now")

    def _refuse_share_group(self, group_id: str, code: ErrorCode, message: str) -> None:
        """Raise ``GroupError(code, message)`` when ``group_id`` names a share group (a request of another protocol)."""
        g = self.share_groups.get(group_id)
        if g is not None and g.state.value != "Dead":
            raise GroupError(code, message)

    async def _append(self, group_id: str, batch: bytearray, on_commit: Callable[[], None]) -> ErrorCode:
        """Append to the group's partition (acks=all) and run ``on_commit`` once acknowledged, in log order
        (``InternalTopic.append``)."""
        return await self.topic.append(self.partition_of(group_id), batch, on_commit, f"group {group_id}")
