"""The group coordinator: serves the group APIs for the groups whose ``__consumer_offsets`` partition this
broker leads, on the broker's event loop.

Coordination: a group belongs to partition ``partition_for(group)`` of ``__consumer_offsets``; its leader is
the coordinator. The topic (created on the first FindCoordinator or commit: compacted,
``offsets.topic.num.partitions`` partitions, replication factor ``offsets.topic.replication.factor`` capped at
the live brokers), which partitions are coordinated here and the replicated writes are ``InternalTopic``'s.
When the leader changes (its broker died or stopped, a preferred-replica election) the new leader loads the
partition (``OffsetStore.load_partition``; COORDINATOR_LOAD_IN_PROGRESS meanwhile) and rebuilds its groups
from their last GroupMetadataValue (members kept until their sessions expire), so it coordinates them with
every acknowledged commit; losing leadership drops them and fails their waiting requests with
NOT_COORDINATOR. Groups of partitions not led here are NOT_COORDINATOR (clients move on).

Writes: a commit, a completed rebalance (GroupMetadataValue with every member's assignment, as Kafka's
``storeGroup``), DeleteGroups / OffsetDelete / offset expiry (tombstones) are appended to the group's
partition as one record batch and acknowledged once the high watermark passed it (acks=all; at once with
replication factor 1), or REQUEST_TIMED_OUT after ``offsets.commit.timeout.ms``; only then is the cache
updated.

Waiting: a JoinGroup waits (long poll) until its rebalance completes: every member rejoined, or the
rebalance timeout passed (those that did not are removed). A follower's SyncGroup waits for the leader's.
A client that disconnects while its JoinGroup waits is removed from the group, so it does not hold the
rebalance. A ticker (every ``TICK_S``) expires sessions, completes rebalances whose time is up, and every
``offsets.retention.check.interval.ms`` removes expired offsets: ``offsets.retention.minutes`` after the
group became Empty, or after the commit for groups known only by their offsets and for topics a Stable
consumer group no longer subscribes to (KIP-211; ``expire_offsets``).

Parts (mixins over ``group_coordinator_base.GroupCoordinatorBase``): ``group_membership`` (JoinGroup,
SyncGroup, Heartbeat, LeaveGroup, session expiry), ``group_offsets`` (commits, fetches, OffsetDelete,
offset expiry, transaction markers) and ``group_consumer_protocol`` (KIP-848 consumer groups: a group id names
a classic or a consumer group; over ``group_consumer_classic``, classic members and the conversions, and
``group_consumer_base``) and ``group_share_protocol`` (KIP-932 share groups); this module adds the loading and unloading of offsets partitions,
FindCoordinator, ListGroups, DescribeGroups, DeleteGroups, the lifecycle and the figures ``broker.metrics``
reports (``groups_by_state``, ``consumer_lag``).

``stop`` fails every waiting request with NOT_COORDINATOR (the members find the next coordinator) and
refuses new ones; the broker stops it before its listeners close, so no long poll holds the shutdown.
Event-loop only.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from broker.log.clock import SYSTEM_CLOCK, Clock
from broker.metrics import ConsumerLag
from spark_kafkalog.protocol import ErrorCode

from .group import Group, GroupError, GroupState, Member
from .group_consumer_protocol import GroupConsumerProtocol
from .group_membership import GroupMembership
from .group_offsets import GroupOffsets
from .group_offsets import _expired_offsets as _expired_offsets  # tests import it from here
from .group_share_protocol import GroupShareProtocol
from .internal_topic import InternalTopic
from .offset_store import OffsetStore, tombstone_batch
from .offsets_topic import OFFSETS_TOPIC

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.metadata.cache import MetadataCache
    from broker.replication.partition import Partition
    from broker.replication.replica_manager import ReplicaManager

TICK_S = 0.1
CREATE_WAIT_S = 10.0


class GroupCoordinator(GroupMembership, GroupOffsets, GroupConsumerProtocol, GroupShareProtocol):
    """Dependencies: the broker's config, metadata cache, replica manager (the offsets partitions),
    topic admin (to create ``__consumer_offsets``) and a clock (milliseconds; tests pass a manual one)."""

    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        metadata: MetadataCache,
        replica_manager: ReplicaManager,
        topic_admin: TopicAdmin,
        *,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.broker_id, self.config, self.clock = broker_id, config, clock
        self.replica_manager = replica_manager
        self.num_partitions = config["offsets.topic.num.partitions"]
        self.store = OffsetStore(self.num_partitions)
        self.groups: dict[str, Group] = {}
        self.topic = InternalTopic(
            OFFSETS_TOPIC,
            self.num_partitions,
            replication_factor=config["offsets.topic.replication.factor"],
            segment_bytes=config["offsets.topic.segment.bytes"],
            topic_configs={"compression.type": "producer"},  # Kafka's offsets topic configs
            config=config,
            metadata=metadata,
            replica_manager=replica_manager,
            topic_admin=topic_admin,
            load=self._load,
            unload=self._unload,
        )
        self._join_waiters: dict[str, dict[str, asyncio.Future]] = {}
        self._sync_waiters: dict[str, dict[str, asyncio.Future]] = {}
        self._next_expiry_ms = 0
        self._marker_scan: dict[int, int] = {}
        """Per offsets partition with pending transactional offsets: the log offset to look for markers from."""
        self._init_consumer_protocol(metadata)
        self._init_share_protocol()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.topic.start(self._on_tick, TICK_S, "group-coordinator")

    async def stop(self) -> None:
        """Fail every waiting request with NOT_COORDINATOR once the timers and loads are cancelled."""
        await self.topic.stop()
        for group_id in list(self.groups):
            self._fail_waiters(group_id, ErrorCode.NOT_COORDINATOR, "the coordinator is shutting down")

    # -- coordination ------------------------------------------------------------------------------
    async def find_coordinator(self, group_id: str) -> tuple[ErrorCode, int]:
        """(error, node id of the coordinator of ``group_id``); creates ``__consumer_offsets`` when missing.

        Once the topic exists the answer is immediate: COORDINATOR_NOT_AVAILABLE (retriable) while the group's
        own partition has no live leader. Other partitions are not waited for: a stopped broker leaves its
        partitions leaderless, and that must not hold the lookups of groups coordinated elsewhere."""
        return await self.topic.find_leader(self.partition_of(group_id), CREATE_WAIT_S)

    def _unload(self, p: int) -> None:
        """This broker stopped leading offsets partition ``p``: drop its groups, fail their waiting requests."""
        self._marker_scan.pop(p, None)
        for group_id in [g for g in self.groups if self.partition_of(g) == p]:
            self._fail_waiters(group_id, ErrorCode.NOT_COORDINATOR, "the coordinator moved")
            del self.groups[group_id]
        self.unload_consumer_groups(p)
        self.unload_share_groups(p)
        self.store.drop_partition(p)

    async def _load(self, p: int, part: Partition) -> int:
        """Rebuild the offsets and groups of partition ``p`` from its log; the number of records read."""
        count = await self.store.load_partition(part.log, p)
        if self.store.pending_producers(p):
            self._marker_scan[p] = part.log.log_end_offset
        now = self.now()
        for group_id, value in list(self.store.groups.items()):
            if self.partition_of(group_id) == p:
                self.groups[group_id] = self._group_from_record(group_id, value, now)
        self.load_consumer_groups(p)
        self.load_share_groups(p, self.store.take_share_records(p))
        return count

    def _group_from_record(self, group_id: str, value: Any, now: int) -> Group:
        g = self._new_group(group_id)
        g.generation = value.generation
        g.protocol_type = value.protocol_type or None
        g.protocol_name = value.protocol
        g.leader_id = value.leader
        for m in value.members:
            member = Member(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.session_timeout,
                m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                [(value.protocol or "", m.subscription)],
                now,
                False,
                m.assignment,
            )
            g.members[m.member_id] = member
            if m.group_instance_id is not None:
                g.static_members[m.group_instance_id] = m.member_id
        g.state = GroupState.STABLE if g.members else GroupState.EMPTY
        g.state_timestamp_ms = value.current_state_timestamp  # when it became Empty: offset retention counts from it
        return g

    # -- the periodic tick ------------------------------------------------------------------------
    async def _on_tick(self) -> None:
        self.tick()
        self.consumer_tick()
        self.share_tick()
        self.scan_markers()
        now = self.now()
        if now >= self._next_expiry_ms:
            self._next_expiry_ms = now + self.config["offsets.retention.check.interval.ms"]
            await self.expire_offsets(now)

    # -- DeleteGroups / ListGroups / DescribeGroups ------------------------------------------------------
    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group: tombstones for its offsets and metadata; NON_EMPTY_GROUP with members."""
        try:
            self._check(group_id)
        except GroupError as e:
            return e.error_code
        if group_id in self.consumer_groups:
            return await self.delete_consumer_group(group_id)
        if group_id in self.share_groups:
            return await self.delete_share_group(group_id)
        group = self.groups.get(group_id)
        offsets = self.store.offsets.get(group_id, {})
        if group is None and not offsets and group_id not in self.store.groups:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group is not None and not group.is_empty:
            return ErrorCode.NON_EMPTY_GROUP
        code = await self._append(
            group_id,
            tombstone_batch(group_id, list(offsets), self.now(), group_record=True),
            lambda: self.store.drop_group(group_id),
        )
        if code == ErrorCode.NONE:
            if group is not None:
                group.mark_dead(self.now())
            self.groups.pop(group_id, None)
        return code

    def list_groups(self) -> list[tuple[str, str, str, str]]:
        """(group id, protocol type, state, group type) of every group this broker coordinates; the group type is
        "classic" (groups known only by their offsets too), "consumer" or "share" (protocol type as the type)."""
        out = {}
        for group_id in self.store.offsets:
            if self.partition_of(group_id) in self.loaded:
                out[group_id] = ("", GroupState.EMPTY.value, "classic")
        for group_id, g in self.groups.items():
            if self.partition_of(group_id) in self.loaded and g.state is not GroupState.DEAD:
                out[group_id] = (g.protocol_type or "", g.state.value, "classic")
        for group_id, state in self.list_consumer_groups():
            out[group_id] = ("consumer", state, "consumer")
        for group_id, state in self.list_share_groups():
            out[group_id] = ("share", state, "share")
        return [(gid, pt, st, gt) for gid, (pt, st, gt) in sorted(out.items())]

    def describe_group(self, group_id: str) -> Group | None:
        """The group (None: unknown, described as Dead). Raises ``GroupError`` when not coordinated here."""
        self._check(group_id)
        return self.groups.get(group_id)

    # -- figures for broker.metrics ------------------------------------------------------------------------
    def groups_by_state(self) -> dict[str, int]:
        """Kafka's name of every group state, classic and consumer -> the groups coordinated here in it (0 for the
        states none is in)."""
        counts = dict.fromkeys((state.value for state in GroupState), 0)
        for group_id, g in list(self.groups.items()):
            if self.partition_of(group_id) in self.loaded:
                counts[g.state.value] += 1
        for state, n in self.consumer_groups_by_state().items():  # Assigning and Reconciling are theirs alone
            counts[state] = counts.get(state, 0) + n
        for state, n in self.share_groups_by_state().items():
            counts[state] = counts.get(state, 0) + n
        return counts

    def consumer_lag(self) -> list[ConsumerLag]:
        """For every committed offset of the groups coordinated here on a partition this broker holds a replica
        of: the replica's high watermark minus the offset, at least 0 (a follower's high watermark trails the
        leader's by at most a fetch)."""
        out = []
        for group_id, offsets in list(self.store.offsets.items()):
            if self.partition_of(group_id) not in self.loaded:
                continue
            for (topic, p), committed in list(offsets.items()):
                part = self.replica_manager.get_partition(topic, p)
                if part is not None and committed.offset >= 0:
                    out.append(ConsumerLag(group_id, topic, p, max(part.high_watermark - committed.offset, 0)))
        return out
