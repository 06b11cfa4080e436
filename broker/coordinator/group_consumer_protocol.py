"""``GroupConsumerProtocol``: the KIP-848 consumer groups of the ``GroupCoordinator`` (ConsumerGroupHeartbeat,
ConsumerGroupDescribe, DeleteGroups and the offset checks of consumer groups, loading and expiry), beside the
classic groups of ``group_membership``.

One namespace: a group id names either a classic group (``groups``) or a consumer group (``consumer_groups``),
never both; offsets are shared by both kinds (``store.offsets``). The state machine of a consumer group is
``consumer.group.ConsumerGroup`` (pure); this part holds the groups, serializes each group's requests with a
per-group lock, persists what the group emits and reverts it when the write fails.

Layout (a chain of mixins): ``group_consumer_base`` (``GroupConsumerBase``: the state, the config, the per-group
locks, the assignment epochs, the batch and write-error helpers), ``group_consumer_classic``
(``GroupConsumerClassic``: classic members of consumer groups and the conversion between classic and consumer
groups, upgrade and downgrade), this module (``GroupConsumerProtocol``: the rest); ``group_consumer_topics``
holds ``MetadataTopicsView`` and ``TopicsVersion`` (the model's ``TopicsView`` over the ``MetadataCache``). The
names this module always exported (``CLASSIC``, ``CONSUMER``, ``write_error``, ``MetadataTopicsView``,
``TopicsVersion``, ``CoordinatorRecord``) are re-exported here.

Persistence: a heartbeat's records (``consumer.records``, Kafka's types 3-8 and 16) are appended to the group's
``__consumer_offsets`` partition as one batch (acks=all, as classic writes) and the answer is sent only after
the append was acknowledged; a failed append reverts the group (``ConsumerGroup.revert``) and is answered with
Kafka's mapping of the write error (``write_error``). Requests of one group wait for the previous one's append
(the group's records stay in log order); different groups proceed concurrently.

Loading (coordinator failover): ``OffsetStore.load_partition`` keeps the consumer records of the partition by
key; ``load_consumer_groups`` replays them (in the order of their last writes) into new ``ConsumerGroup``s.
Members loaded get a fresh session on the next tick (as Kafka schedules their timers on load).

Expiry: ``consumer_tick`` (from the coordinator's ticker) starts, per group with a session or rebalance
deadline passed (or members loaded without one), a task that runs ``ConsumerGroup.expire`` under the group's
lock and appends its records (and a downgrade's, ``group_consumer_classic``).

Conversion: a ConsumerGroupHeartbeat joining (epoch 0) a classic group deletes it when it is empty or upgrades
it online (``group.consumer.migration.policy``); the rules and the classic members' requests are described in
``group_consumer_classic``.

Group configs: a group's own ``consumer.session.timeout.ms`` and ``consumer.heartbeat.interval.ms`` (GROUP config
resources) apply from its next heartbeat, over ``group.consumer.session.timeout.ms`` / ``...heartbeat.interval.ms``.

Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from spark_kafkalog.protocol import ErrorCode

from .consumer.group import ConsumerGroup, ConsumerGroupState, HeartbeatOutcome
from .consumer.record_codec import encode_record
from .consumer.records import CoordinatorRecord
from .group import GroupError
from .group_consumer_base import CLASSIC, CONSUMER, nothing, records_batch, write_error
from .group_consumer_classic import GroupConsumerClassic
from .group_consumer_topics import MetadataTopicsView, TopicsVersion
from .offsets_topic import encode_group_key

if TYPE_CHECKING:
    from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

log = logging.getLogger("kafkalog.coordinator")


class GroupConsumerProtocol(GroupConsumerClassic):
    """The consumer groups of the ``GroupCoordinator`` (a part of it; see ``group_coordinator``)."""

    # -- queries -------------------------------------------------------------------------------------------
    @property
    def consumer_protocol_enabled(self) -> bool:
        return CONSUMER in {p.lower() for p in self._setting("group.coordinator.rebalance.protocols")}

    def group_type(self, group_id: str) -> str | None:
        """``"consumer"``, ``"classic"`` (a classic group, or one known only by its offsets) or None."""
        if group_id in self.consumer_groups:
            return CONSUMER
        if group_id in self.groups or group_id in self.store.offsets or group_id in self.store.groups:
            return CLASSIC
        return None

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        """The consumer group for ConsumerGroupDescribe. Raises ``GroupError``: INVALID_GROUP_ID, NOT_COORDINATOR,
        COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (unknown, or a classic group; Kafka's messages)."""
        self._check(group_id)
        group = self.consumer_groups.get(group_id)
        if group is not None and group.state is not ConsumerGroupState.DEAD:
            return group
        self._refuse_share_group(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if self.group_type(group_id) == CLASSIC:  # Kafka keeps a group known by its offsets as a classic group
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")

    def list_consumer_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of every consumer group coordinated here."""
        return [
            (gid, g.state.value)
            for gid, g in sorted(self.consumer_groups.items())
            if self.partition_of(gid) in self.loaded and g.state is not ConsumerGroupState.DEAD
        ]

    def consumer_groups_by_state(self) -> dict[str, int]:
        counts = dict.fromkeys((s.value for s in ConsumerGroupState), 0)
        for gid, g in list(self.consumer_groups.items()):
            if self.partition_of(gid) in self.loaded:
                counts[g.state.value] += 1
        return counts

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------------------------
    def _apply_consumer_group_config(self, group: ConsumerGroup) -> None:
        """The group's own ``consumer.session.timeout.ms`` / ``consumer.heartbeat.interval.ms`` (GROUP configs,
        ``broker.config_admin.group_configs``, from the source the broker gave ``use_group_configs``) over the
        broker's ``group.consumer.*`` defaults; nothing without a source (the coordinator alone, in tests)."""
        source = getattr(self, "_group_configs_source", None)
        configs = source() if source is not None else None
        consumer_config = getattr(configs, "consumer_config", None)
        if consumer_config is not None:
            settings = consumer_config(group.group_id)
            group.session_timeout_ms = settings.session_timeout_ms
            group.heartbeat_interval_ms = settings.heartbeat_interval_ms

    async def consumer_group_heartbeat(
        self,
        request: ConsumerGroupHeartbeatRequest,
        *,
        version: int,
        client_id: str,
        client_host: str,
        describable: Callable[[str], bool] | None = None,
    ) -> HeartbeatOutcome:
        """One ConsumerGroupHeartbeat, authorized: the outcome once its records are acknowledged. Raises
        ``GroupError`` (the group's own errors, GROUP_ID_NOT_FOUND, the coordinator's, a write's)."""
        group_id = request.group_id
        self._check(group_id)
        async with self._lock(group_id):
            self._check(group_id)  # it may have moved while this waited
            self._refuse_share_group(
                group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group."
            )
            group = self.consumer_groups.get(group_id)
            created = group is None or group.state is ConsumerGroupState.DEAD
            classic = self.groups.get(group_id)
            upgrade: list[CoordinatorRecord] = []
            now = self.now()
            if created:
                if request.member_epoch != 0:
                    raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
                if classic is not None and not classic.is_empty:
                    if self.migration_policy not in ("upgrade", "bidirectional"):
                        raise GroupError(
                            ErrorCode.GROUP_ID_NOT_FOUND,
                            f"Cannot upgrade classic group {group_id} to consumer group because online upgrade is "
                            "disabled.",
                        )
                    group, upgrade = ConsumerGroup.from_classic_group(
                        classic, self.topics_view(describable), now, **self._consumer_group_settings()
                    )
                else:
                    group = self._new_consumer_group(group_id)
            assert group is not None, "created above when missing"
            self._apply_consumer_group_config(group)
            outcome = group.heartbeat(
                request,
                self.topics_view(describable),
                now,
                client_id=client_id,
                client_host=client_host,
                version=version,
            )
            if not outcome.records and not upgrade:
                self._track_assignment_epochs(group_id, group)
                return outcome
            drop_classic = created and (classic is not None or group_id in self.store.groups)
            pairs: list[tuple[bytes, bytes | None]] = [(encode_group_key(group_id), None)] if drop_classic else []
            pairs += [encode_record(rec) for rec in (*upgrade, *outcome.records)]
            downgrade = self._downgrade(group, now) if request.member_epoch == -1 else None
            if downgrade is not None:
                pairs += downgrade[0]
            if created:  # visible at once, so a JoinGroup racing the append sees a consumer group
                self.consumer_groups[group_id] = group
                self.groups.pop(group_id, None)

            def committed() -> None:
                if drop_classic:
                    self.store.groups.pop(group_id, None)
                    kind = "the classic group with members" if upgrade else "the empty classic group"
                    log.info("group %s: converted %s to a consumer group", group_id, kind)

            code = await self._append(group_id, records_batch(pairs, now), committed)
            if code != ErrorCode.NONE:
                group.revert(outcome.snapshot)
                if created:
                    if self.consumer_groups.get(group_id) is group:
                        del self.consumer_groups[group_id]
                    if classic is not None and group_id not in self.groups:
                        self.groups[group_id] = classic
                raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")
            if upgrade:  # the classic members waiting in JoinGroup/SyncGroup rejoin the consumer group (Kafka)
                self._fail_classic_waiters(
                    group_id, ErrorCode.REBALANCE_IN_PROGRESS, "the group became a consumer group"
                )
            if downgrade is not None:
                self._downgraded(group_id, group, downgrade[1])
                return outcome
            self._track_assignment_epochs(group_id, group)
            return outcome

    async def delete_consumer_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups of a consumer group: NON_EMPTY_GROUP with members, else tombstones for its offsets and
        records (one batch) and the group is gone."""
        async with self._lock(group_id):
            group = self.consumer_groups.get(group_id)
            if group is None:
                return ErrorCode.GROUP_ID_NOT_FOUND
            if not group.is_empty:
                return ErrorCode.NON_EMPTY_GROUP
            offsets = list(self.store.offsets.get(group_id, {}))
            try:
                await self._delete_consumer_group_records(group_id, group, offsets=offsets)
            except GroupError as e:
                return e.error_code
            return ErrorCode.NONE

    # -- offsets ---------------------------------------------------------------------------------------------------
    def consumer_commit_errors(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        partitions: Collection[tuple[str, int]],
        *,
        transactional: bool = False,
    ) -> dict[tuple[str, int], ErrorCode]:
        """Kafka 4.4's checks of an OffsetCommit (or TxnOffsetCommit) to a consumer group, KIP-1251 included: the
        partitions refused (STALE_MEMBER_EPOCH) by name; the group-level refusals raise ``GroupError``.

        An epoch < 0 commits while the group has no members (admin tools, ``assign()``); a transactional commit
        naming no member is accepted; otherwise the member must exist (UNKNOWN_MEMBER_ID) and its epoch must not
        be newer than the member's (STALE_MEMBER_EPOCH). An older epoch is accepted per partition when the member
        holds the partition (assigned or pending revocation) and got it at that epoch or before: a commit sent just
        before a heartbeat moved the member's epoch still lands (the partition's assignment epoch is tracked here,
        ``_assignment_epochs``; a member loaded from the log counts its partitions from its epoch at loading)."""
        group = self.consumer_groups[group_id]
        if member_epoch < 0 and not group.members:
            return {}
        if transactional and member_epoch < 0 and not member_id:
            return {}
        member = group.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
        if member_epoch == member.member_epoch:
            return {}
        # a classic member's (online migration) epoch is its generation: Kafka answers ILLEGAL_GENERATION then
        classic = member.classic_member_metadata is not None
        stale = ErrorCode.ILLEGAL_GENERATION if classic else ErrorCode.STALE_MEMBER_EPOCH
        if member_epoch > member.member_epoch:
            raise GroupError(
                stale, f"Received member epoch {member_epoch} is newer than current member epoch {member.member_epoch}."
            )
        epochs = self._assignment_epochs.get(group_id, {}).get(member_id, {})
        refused = {}
        for topic, partition in partitions:
            t = self.metadata.topics.get(topic)
            assigned_at = None if t is None else epochs.get((t.topic_id, partition))
            if assigned_at is None or member_epoch < assigned_at:
                refused[(topic, partition)] = stale
        return refused

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> None:
        """OffsetFetch v9+'s member check for a consumer group (nothing for other groups). Raises ``GroupError``."""
        self._check(group_id)
        group = self.consumer_groups.get(group_id)
        if group is not None:
            group.validate_offset_fetch(member_id, member_epoch)

    # -- loading and expiry --------------------------------------------------------------------------------------
    def load_consumer_groups(self, partition: int) -> int:
        """Replay the consumer records loaded for ``partition``; the number of groups rebuilt."""
        count = 0
        for group_id, records in self.store.take_consumer_records(partition).items():
            group = self._new_consumer_group(group_id)
            for rec in records:
                group.replay(rec)
            if group.state is ConsumerGroupState.DEAD or (group.is_empty and group.group_epoch == 0):
                continue
            if group_id in self.groups or group_id in self.store.groups:
                log.warning("group %s has both classic and consumer records; the consumer group wins", group_id)
                self.groups.pop(group_id, None)
                self.store.groups.pop(group_id, None)
            self.consumer_groups[group_id] = group
            self._track_assignment_epochs(group_id, group)
            count += 1
        return count

    def unload_consumer_groups(self, partition: int) -> None:
        for group_id in [g for g in self.consumer_groups if self.partition_of(g) == partition]:
            del self.consumer_groups[group_id]
            self._cg_locks.pop(group_id, None)
            self._assignment_epochs.pop(group_id, None)

    def consumer_tick(self) -> None:
        """Start the expiry of every consumer group with a deadline passed (see the module docstring)."""
        now = self.now()
        loop = asyncio.get_running_loop()
        for group_id, group in list(self.consumer_groups.items()):
            if group_id in self._cg_expiring or self.partition_of(group_id) not in self.loaded:
                continue
            deadline = group.next_deadline_ms()
            fresh = any(m.session_deadline_ms <= 0 for m in group.members.values())
            if fresh or (deadline is not None and deadline <= now):
                self._cg_expiring.add(group_id)
                loop.create_task(self._expire_consumer_group(group_id))

    async def _expire_consumer_group(self, group_id: str) -> None:
        try:
            async with self._lock(group_id):
                group = self.consumer_groups.get(group_id)
                if group is None or self.coordinator_error(group_id) != ErrorCode.NONE:
                    return
                snap = group.snapshot()
                had_consumer_members = any(m.classic_member_metadata is None for m in group.members.values())
                records = group.expire(self.now())
                if not records:
                    return
                pairs = [encode_record(r) for r in records]
                downgrade = self._downgrade(group, self.now()) if had_consumer_members else None
                if downgrade is not None:
                    pairs += downgrade[0]
                code = await self._append(group_id, records_batch(pairs, self.now()), nothing)
                if code != ErrorCode.NONE:
                    group.restore(snap)
                    log.warning("group %s: writing the expiry of members failed: %s", group_id, code.name)
                elif downgrade is not None:
                    self._downgraded(group_id, group, downgrade[1])
                else:
                    self._track_assignment_epochs(group_id, group)
                    log.info("group %s: fenced members whose session or rebalance timeout passed", group_id)
        finally:
            self._cg_expiring.discard(group_id)


__all__ = [
    "CLASSIC",
    "CONSUMER",
    "CoordinatorRecord",
    "GroupConsumerProtocol",
    "MetadataTopicsView",
    "TopicsVersion",
    "write_error",
]
