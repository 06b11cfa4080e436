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

``stop`` fails every waiting request with NOT_COORDINATOR (the members find the next coordinator) and
refuses new ones; the broker stops it before its listeners close, so no long poll holds the shutdown.
Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from broker.log.clock import SYSTEM_CLOCK, Clock
from spark_kafkalog.protocol import ErrorCode

from .group import Group, GroupError, GroupState, JoinResult, Member
from .internal_topic import InternalTopic
from .offset_store import (
    CommittedOffset,
    OffsetStore,
    end_txn_marker,
    group_metadata_batch,
    iter_log_batches,
    offset_commit_batch,
    tombstone_batch,
)
from .offsets_topic import OFFSETS_TOPIC, GroupMetadataValue, MemberMetadata

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.metadata.cache import MetadataCache
    from broker.replication.partition import Partition
    from broker.replication.replica_manager import ReplicaManager

log = logging.getLogger("kafkalog.coordinator")

TICK_S = 0.1
CREATE_WAIT_S = 10.0


class GroupCoordinator:
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

    @property
    def loaded(self) -> dict[int, int]:
        """The offsets partitions coordinated here (-> their leader epoch when loaded)."""
        return self.topic.loaded

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        self.topic.start(self._on_tick, TICK_S, "group-coordinator")

    async def stop(self) -> None:
        """Fail every waiting request with NOT_COORDINATOR once the timers and loads are cancelled."""
        await self.topic.stop()
        for group_id in list(self.groups):
            self._fail_waiters(group_id, ErrorCode.NOT_COORDINATOR, "the coordinator is shutting down")

    def now(self) -> int:
        return self.clock.milliseconds()

    # -- coordination ------------------------------------------------------------------------------
    def partition_of(self, group_id: str) -> int:
        return self.store.partition_of(group_id)

    def coordinator_error(self, group_id: str) -> ErrorCode:
        """NONE when this broker coordinates ``group_id`` now, else the error to answer."""
        return self.topic.coordinator_error(self.partition_of(group_id))

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

    def _new_group(self, group_id: str) -> Group:
        return Group(
            group_id,
            initial_rebalance_delay_ms=self.config["group.initial.rebalance.delay.ms"],
            max_size=self.config["group.max.size"],
        )

    # -- JoinGroup / SyncGroup / Heartbeat / LeaveGroup ---------------------------------------------
    def _check(self, group_id: str) -> None:
        if not group_id:
            raise GroupError(ErrorCode.INVALID_GROUP_ID, "the group id is empty")
        code = self.coordinator_error(group_id)
        if code != ErrorCode.NONE:
            raise GroupError(code, f"broker {self.broker_id} does not coordinate group {group_id} now")

    async def join_group(
        self,
        group_id: str,
        *,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        require_known_member_id: bool,
        disconnected: asyncio.Future | None = None,
    ) -> JoinResult:
        """Join (or rejoin) and wait for the rebalance to complete. Raises ``GroupError``."""
        self._check(group_id)
        lo, hi = self.config["group.min.session.timeout.ms"], self.config["group.max.session.timeout.ms"]
        if not lo <= session_timeout_ms <= hi:
            raise GroupError(
                ErrorCode.INVALID_SESSION_TIMEOUT,
                f"session timeout {session_timeout_ms} ms is outside [{lo}, {hi}] (group.min/max.session.timeout.ms)",
            )
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {group_id} does not exist")
            group = self.groups[group_id] = self._new_group(group_id)
        now = self.now()
        requested_id = member_id
        member_id, immediate = group.join(
            member_id=member_id,
            group_instance_id=group_instance_id,
            client_id=client_id,
            client_host=client_host,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=protocol_type,
            protocols=protocols,
            require_known_member_id=require_known_member_id,
            now=now,
        )
        if immediate is not None:
            if not requested_id and group_instance_id is not None:
                # a static member took over its slot without a rebalance: store its new member id, or a
                # coordinator loading the group later would fence it (FENCED_INSTANCE_ID) as an impostor
                code = await self._store_group(group)
                if code != ErrorCode.NONE:
                    raise GroupError(code, f"storing group {group_id} failed")
            return immediate
        fut = asyncio.get_running_loop().create_future()
        waiters = self._join_waiters.setdefault(group_id, {})
        old = waiters.pop(member_id, None)
        if old is not None and not old.done():  # a retried join replaces the old one
            old.set_exception(GroupError(ErrorCode.UNKNOWN_MEMBER_ID, "superseded by a newer JoinGroup"))
        waiters[member_id] = fut
        self._after_change(group)
        await self._wait(fut, disconnected)
        if not fut.done():  # the client went away while waiting: it must not hold the rebalance
            waiters.pop(member_id, None)
            fut.cancel()
            if group.has_member(member_id) and self.groups.get(group_id) is group:
                group.remove_member(member_id, self.now())
                self._after_change(group)
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, "the client disconnected while joining")
        return fut.result()

    async def sync_group(
        self,
        group_id: str,
        *,
        member_id: str,
        group_instance_id: str | None,
        generation: int,
        assignments: dict[str, bytes],
        protocol_type: str | None,
        protocol_name: str | None,
        disconnected: asyncio.Future | None = None,
    ) -> tuple[bytes, str | None, str | None]:
        """(assignment, protocol type, protocol name) once the leader synced. Raises ``GroupError``."""
        self._check(group_id)
        group = self._existing(group_id)
        was = group.state
        assignment = group.sync(
            member_id=member_id,
            group_instance_id=group_instance_id,
            generation=generation,
            assignments=assignments,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            now=self.now(),
        )
        if assignment is not None:
            if was is GroupState.COMPLETING_REBALANCE:  # the leader's sync: store the group, release followers
                code = await self._store_group(group)
                if code != ErrorCode.NONE:
                    group.prepare_rebalance(self.now())
                    self._after_change(group)
                    raise GroupError(code, f"storing group {group_id} failed")
                for mid, fut in self._sync_waiters.pop(group_id, {}).items():
                    if not fut.done():
                        fut.set_result(group.assignment_of(mid))
            return assignment, group.protocol_type, group.protocol_name
        fut = asyncio.get_running_loop().create_future()
        self._sync_waiters.setdefault(group_id, {})[member_id] = fut
        await self._wait(fut, disconnected)
        if not fut.done():
            self._sync_waiters.get(group_id, {}).pop(member_id, None)
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, "the client disconnected while syncing")
        return fut.result(), group.protocol_type, group.protocol_name

    def heartbeat(self, group_id: str, *, member_id: str, group_instance_id: str | None, generation: int) -> None:
        self._check(group_id)
        self._existing(group_id).heartbeat(
            member_id=member_id, group_instance_id=group_instance_id, generation=generation, now=self.now()
        )

    def leave_group(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        """Remove members; one error per member (the group-level check raises ``GroupError``)."""
        self._check(group_id)
        group = self._existing(group_id)
        codes = []
        for member_id, instance_id in members:
            try:
                group.leave(member_id=member_id, group_instance_id=instance_id, now=self.now())
                codes.append(ErrorCode.NONE)
            except GroupError as e:
                codes.append(e.error_code)
        self._after_change(group)
        return codes

    def _existing(self, group_id: str) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {group_id} does not exist")
        return group

    async def _wait(self, fut: asyncio.Future, disconnected: asyncio.Future | None) -> None:
        waits = [fut] if disconnected is None else [fut, disconnected]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)

    def _after_change(self, group: Group) -> None:
        """React to a state change: a rebalance fails waiting syncs, and may complete at once."""
        if group.state is GroupState.PREPARING_REBALANCE:
            for fut in self._sync_waiters.pop(group.group_id, {}).values():
                if not fut.done():
                    fut.set_exception(GroupError(ErrorCode.REBALANCE_IN_PROGRESS, "the group is rebalancing"))
        now = self.now()
        group.expire_pending(now)
        if group.ready_to_complete(now):
            self._complete_join(group, now)

    def _complete_join(self, group: Group, now: int) -> None:
        results = group.complete_join(now)
        for mid, fut in self._join_waiters.pop(group.group_id, {}).items():
            if fut.done():
                continue
            if mid in results:
                fut.set_result(results[mid])
            else:
                fut.set_exception(GroupError(ErrorCode.UNKNOWN_MEMBER_ID, "removed from the group by the rebalance"))
        log.info(
            "group %s: generation %d, %d members, protocol %s, state %s",
            group.group_id,
            group.generation,
            len(group.members),
            group.protocol_name,
            group.state.value,
        )
        if group.state is GroupState.EMPTY:
            asyncio.get_running_loop().create_task(self._store_group(group))

    def _fail_waiters(self, group_id: str, code: ErrorCode, message: str) -> None:
        for waiters in (self._join_waiters.pop(group_id, {}), self._sync_waiters.pop(group_id, {})):
            for fut in waiters.values():
                if not fut.done():
                    fut.set_exception(GroupError(code, message))

    # -- the periodic tick ------------------------------------------------------------------------
    async def _on_tick(self) -> None:
        self.tick()
        self.scan_markers()
        now = self.now()
        if now >= self._next_expiry_ms:
            self._next_expiry_ms = now + self.config["offsets.retention.check.interval.ms"]
            await self.expire_offsets(now)

    def tick(self) -> None:
        """Expire sessions and complete rebalances whose time has come."""
        now = self.now()
        for group in list(self.groups.values()):
            for mid in group.expired_members(now):
                log.info("group %s: member %s session expired", group.group_id, mid)
                group.remove_member(mid, now)
            self._after_change(group)

    async def expire_offsets(self, now: int) -> int:
        """Remove expired committed offsets (Kafka's KIP-211 rules); returns how many were removed.

        Retention (``offsets.retention.minutes``) counts from: the moment the group became Empty, for a group
        that used the group protocol (so offsets of partitions it stopped committing while active survive
        until it has been Empty that long); the last commit, for a group known only by its offsets (simple
        consumers), and for offsets of topics a Stable consumer group no longer subscribes to. Offsets of
        groups in any other state, or of subscribed topics, do not expire. An explicit v2-4 retention time
        (``expire_timestamp``) overrides the rest. The group's metadata goes with its last offset when it is
        Empty."""
        retention_ms = self.config["offsets.retention.minutes"] * 60_000
        removed = 0
        for group_id, offsets in list(self.store.offsets.items()):
            if self.partition_of(group_id) not in self.loaded:
                continue
            group = self.groups.get(group_id)
            expired = _expired_offsets(group, offsets, now, retention_ms)
            if not expired:
                continue
            drop_group = len(expired) == len(offsets) and (group is None or group.state is GroupState.EMPTY)

            def forget(group_id: str = group_id, expired: list = expired, drop_group: bool = drop_group) -> None:
                self.store.delete_offsets(group_id, expired)
                if drop_group:
                    self.store.drop_group(group_id)

            code = await self._append(
                group_id, tombstone_batch(group_id, expired, now, group_record=drop_group), forget
            )
            if code == ErrorCode.NONE:
                removed += len(expired)
                if drop_group:
                    self.groups.pop(group_id, None)
                log.info("group %s: expired %d committed offsets", group_id, len(expired))
        return removed

    def scan_markers(self) -> None:
        """Apply the transaction markers that reached (acknowledged, below the high watermark) the offsets
        partitions with pending transactional offsets: COMMIT makes the producer's offsets committed, ABORT
        drops them. Markers are appended by WriteTxnMarkers (``broker.handlers.write_txn_markers``); reading
        them back from the log keeps the log the only interface between the two."""
        for p, start in list(self._marker_scan.items()):
            part = self.replica_manager.get_partition(OFFSETS_TOPIC, p)
            if part is None or p not in self.loaded:
                continue
            hw = part.high_watermark
            if start >= hw:
                continue
            pending = self.store.pending_producers(p)
            for batch in iter_log_batches(part.log, start, hw):
                if batch.is_control and batch.header().producer_id in pending:
                    commit = end_txn_marker(batch)
                    if commit is not None:
                        header = batch.header()
                        self.store.end_txn(header.producer_id, p, commit, header.base_offset)
                start = batch.next_offset
            if self.store.pending_producers(p):
                self._marker_scan[p] = start
            else:
                del self._marker_scan[p]

    # -- offsets --------------------------------------------------------------------------------------
    async def commit_txn_offsets(
        self,
        group_id: str,
        *,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation: int,
        offsets: dict[tuple[str, int], CommittedOffset],
    ) -> dict[tuple[str, int], ErrorCode]:
        """TxnOffsetCommit: append the offsets as a transactional batch of ``producer_id`` (the log checks its
        epoch); they stay pending until the producer's COMMIT marker reaches the partition (``scan_markers``).
        Kafka's checks: a named member must be in the group, a generation >= 0 must be the current one."""
        self._check(group_id)
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = self._new_group(group_id)
        if member_id and member_id not in group.members:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"{member_id} is not a member of group {group_id}")
        if generation >= 0 and generation != group.generation:
            raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"group {group_id} is at generation {group.generation}")
        limit = self.config["offset.metadata.max.bytes"]
        result: dict[tuple[str, int], ErrorCode] = {}
        valid = {}
        for tp, c in offsets.items():
            if c.metadata is not None and len(c.metadata.encode()) > limit:
                result[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                valid[tp] = c
        if valid:
            p = self.partition_of(group_id)
            part = self.replica_manager.get_partition(OFFSETS_TOPIC, p)
            first = part.log.log_end_offset if part is not None else 0

            def pend() -> None:
                self.store.add_pending(producer_id, group_id, valid, first)  # the batch's offset: appended at once
                self._marker_scan[p] = min(self._marker_scan.get(p, first), first)

            batch = offset_commit_batch(
                group_id, valid, self.now(), producer_id=producer_id, producer_epoch=producer_epoch
            )
            code = await self._append(group_id, batch, pend)
            for tp in valid:
                result[tp] = code
        return result

    def unstable_offsets(self, group_id: str) -> set[tuple[str, int]]:
        """Partitions of the group with transactional offsets not yet committed or aborted (require_stable)."""
        return self.store.unstable(group_id)

    async def commit_offsets(
        self,
        group_id: str,
        *,
        member_id: str,
        group_instance_id: str | None,
        generation: int,
        offsets: dict[tuple[str, int], CommittedOffset],
    ) -> dict[tuple[str, int], ErrorCode]:
        """Store offsets (acks=all); one error per partition. The group-level checks raise ``GroupError``."""
        self._check(group_id)
        group = self.groups.get(group_id)
        if group is None:
            if generation >= 0:  # a member of a generation this coordinator does not know (Kafka's answer)
                raise GroupError(
                    ErrorCode.ILLEGAL_GENERATION,
                    f"group {group_id} does not exist, so it has no generation {generation}",
                )
            group = self.groups[group_id] = self._new_group(group_id)
        group.validate_commit(member_id=member_id, group_instance_id=group_instance_id, generation=generation)
        if member_id in group.members:
            group.members[member_id].last_heartbeat_ms = self.now()
        result: dict[tuple[str, int], ErrorCode] = {}
        limit = self.config["offset.metadata.max.bytes"]
        valid = {}
        for tp, c in offsets.items():
            if c.metadata is not None and len(c.metadata.encode()) > limit:
                result[tp] = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                valid[tp] = c
        if valid:
            code = await self._append(
                group_id,
                offset_commit_batch(group_id, valid, self.now()),
                lambda: self.store.record_offsets(group_id, valid),
            )
            for tp in valid:
                result[tp] = code
        return result

    def fetch_offsets(
        self, group_id: str, tps: list[tuple[str, int]] | None
    ) -> dict[tuple[str, int], CommittedOffset | None]:
        """Committed offsets of ``tps`` (None: every partition the group committed). Raises ``GroupError``."""
        self._check(group_id)
        cached = self.store.offsets.get(group_id, {})
        if tps is None:
            return dict(cached)
        return {tp: cached.get(tp) for tp in tps}

    async def delete_offsets(
        self, group_id: str, tps: list[tuple[str, int]]
    ) -> tuple[ErrorCode, dict[tuple[str, int], ErrorCode]]:
        """OffsetDelete: group error, per-partition errors (GROUP_SUBSCRIBED_TO_TOPIC for consumed topics)."""
        self._check(group_id)
        group = self.groups.get(group_id)
        if group is None and group_id not in self.store.offsets:
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        subscribed = (_subscribed_topics(group) or set()) if group is not None else set()
        result = {tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if tp[0] in subscribed else ErrorCode.NONE for tp in tps}
        deletable = [tp for tp, code in result.items() if code == ErrorCode.NONE]
        if deletable:
            code = await self._append(
                group_id,
                tombstone_batch(group_id, deletable, self.now(), group_record=False),
                lambda: self.store.delete_offsets(group_id, deletable),
            )
            if code != ErrorCode.NONE:
                return code, {}
        return ErrorCode.NONE, result

    async def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups for one group: tombstones for its offsets and metadata; NON_EMPTY_GROUP with members."""
        try:
            self._check(group_id)
        except GroupError as e:
            return e.error_code
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

    # -- listing ---------------------------------------------------------------------------------------
    def list_groups(self) -> list[tuple[str, str, str]]:
        """(group id, protocol type, state) of every group this broker coordinates."""
        out = {}
        for group_id in self.store.offsets:
            if self.partition_of(group_id) in self.loaded:
                out[group_id] = ("", GroupState.EMPTY.value)
        for group_id, g in self.groups.items():
            if self.partition_of(group_id) in self.loaded and g.state is not GroupState.DEAD:
                out[group_id] = (g.protocol_type or "", g.state.value)
        return [(gid, pt, st) for gid, (pt, st) in sorted(out.items())]

    def describe_group(self, group_id: str) -> Group | None:
        """The group (None: unknown, described as Dead). Raises ``GroupError`` when not coordinated here."""
        self._check(group_id)
        return self.groups.get(group_id)

    # -- writes ----------------------------------------------------------------------------------------
    async def _store_group(self, group: Group) -> ErrorCode:
        now = self.now()
        value = GroupMetadataValue(
            protocol_type=group.protocol_type or "",
            generation=group.generation,
            protocol=group.protocol_name,
            leader=group.leader_id,
            current_state_timestamp=group.state_timestamp_ms if group.state_timestamp_ms >= 0 else now,
            members=[
                MemberMetadata(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout=m.rebalance_timeout_ms,
                    session_timeout=m.session_timeout_ms,
                    subscription=m.metadata_for(group.protocol_name),
                    assignment=m.assignment,
                )
                for m in group.members.values()
            ],
        )

        def remember() -> None:
            self.store.groups[group.group_id] = value

        return await self._append(group.group_id, group_metadata_batch(group.group_id, value, now), remember)

    async def _append(self, group_id: str, batch: bytearray, on_commit: Callable[[], None]) -> ErrorCode:
        """Append to the group's partition (acks=all) and run ``on_commit`` once acknowledged, in log order
        (``InternalTopic.append``)."""
        return await self.topic.append(self.partition_of(group_id), batch, on_commit, f"group {group_id}")


def _expired_offsets(
    group: Group | None, offsets: dict[tuple[str, int], CommittedOffset], now: int, retention_ms: int
) -> list[tuple[str, int]]:
    """The partitions of ``offsets`` past their retention (see ``GroupCoordinator.expire_offsets``)."""
    keep_topics: set[str] = set()
    if group is None or not group.protocol_type:

        def base(c: CommittedOffset) -> int:
            return c.commit_timestamp

    elif group.state is GroupState.EMPTY:

        def base(c: CommittedOffset) -> int:
            return group.state_timestamp_ms if group.state_timestamp_ms >= 0 else c.commit_timestamp

    elif group.state is GroupState.STABLE and group.protocol_type == "consumer":
        subscribed = _subscribed_topics(group, strict=True)
        if subscribed is None:  # a subscription it cannot read: nothing is known to be unsubscribed
            return []
        keep_topics = subscribed

        def base(c: CommittedOffset) -> int:
            return c.commit_timestamp

    else:
        return []
    return [
        tp
        for tp, c in offsets.items()
        if tp[0] not in keep_topics
        and (now >= c.expire_timestamp if c.expire_timestamp >= 0 else now - base(c) >= retention_ms)
    ]


def _subscribed_topics(group: Group, *, strict: bool = False) -> set[str] | None:
    """Topics the consumer-protocol members subscribe to (from their JoinGroup metadata); with ``strict``,
    None when a member's metadata cannot be decoded (unreadable subscriptions are skipped otherwise)."""
    from spark_kafkalog.protocol import decode_data

    topics: set[str] = set()
    if group.protocol_type != "consumer":
        return topics
    for m in group.members.values():
        try:
            _, sub = decode_data("ConsumerProtocolSubscription", m.metadata_for(group.protocol_name))
        except Exception:
            if strict:
                return None
            continue
        topics.update(sub.topics)
    return topics
