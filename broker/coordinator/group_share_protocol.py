"""``GroupShareProtocol``: the KIP-932 share groups of the ``GroupCoordinator`` (ShareGroupHeartbeat,
ShareGroupDescribe, their part of ListGroups and DeleteGroups, loading and session expiry).

One namespace: a group id names a classic, a consumer or a share group (``share_groups``), never two. A share
heartbeat for a classic or consumer group is GROUP_ID_NOT_FOUND ("Group <id> is not a share group.", Kafka
4.4); a consumer heartbeat or ConsumerGroupDescribe for a share group is GROUP_ID_NOT_FOUND ("... is not a
consumer group."), a JoinGroup INCONSISTENT_GROUP_PROTOCOL. The state machine of a share group is
``share.group.ShareGroup`` (pure); this part holds the groups, serializes each group's requests with the
per-group lock the consumer groups use, persists what a group emits (its records, ``share.records``, types
10-15, one batch appended to the group's ``__consumer_offsets`` partition, acks=all) before answering, and
restores the group when the write fails (Kafka's mapping of the write error, ``write_error``).

Share-partition state: before a heartbeat, the partitions of the subscribed topics whose share state is not
initialized yet (a new subscription, a topic that grew) are initialized through the share persister
(``share_persister.initialize(group, topic id, partition, state_epoch, start_offset=-1)``, concurrently; the
state epoch is the group epoch the heartbeat moves to) and the successes recorded in one
ShareGroupStatePartitionMetadata (15) record; only initialized partitions are assigned, so a failed
initialization is retried on the next heartbeat. The state of a deleted topic's partitions is deleted (best
effort) and the topic dropped from the record. Without a persister (``share_persister`` None, see ``use_share_persister``: unit tests
of the coordinator alone) partitions count as initialized at once. DeleteGroups deletes the state of every
initialized partition (``share_persister.delete``) before the group's tombstones.

Config (Kafka's names, ``broker.config_keys.share_groups``): ``group.share.enable``,
``group.share.session.timeout.ms``, ``group.share.heartbeat.interval.ms``, ``group.share.max.size``; a group's
own ``share.session.timeout.ms`` and ``share.heartbeat.interval.ms`` (``use_group_configs``) override the first
two at each heartbeat.

Loading (failover): ``OffsetStore.load_partition`` keeps the share records of a partition by key;
``load_share_groups`` replays them into new groups; members loaded get a fresh session on the next tick.
Expiry: ``share_tick`` (the coordinator's ticker) starts a task per group with a session deadline passed.
Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from spark_kafkalog.protocol import ErrorCode

from .group import GroupError
from .group_consumer_base import GroupConsumerBase, nothing, records_batch, write_error
from .share.group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    ShareGroup,
    ShareGroupState,
    ShareHeartbeatOutcome,
    TopicsView,
    validate_heartbeat,
)
from .share.record_codec import encode_record

if TYPE_CHECKING:
    from spark_kafkalog.protocol.apis.share_group_heartbeat import ShareGroupHeartbeatRequest

log = logging.getLogger("kafkalog.coordinator")

SHARE = "share"


class ShareGroupSettings(Protocol):
    """A group's own membership settings (``broker.config_admin.group_configs.ShareGroupConfig``)."""

    @property
    def session_timeout_ms(self) -> int: ...

    @property
    def heartbeat_interval_ms(self) -> int: ...


class ShareGroupConfigs(Protocol):
    """The group configs (``broker.config_admin.group_configs.GroupConfigs``)."""

    def share_config(self, group_id: str) -> ShareGroupSettings: ...


class SharePersister(Protocol):
    """What the group coordinator uses of the share persister (``broker.share.persister.Persister``)."""

    async def initialize(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> tuple[ErrorCode, str | None]: ...

    async def delete(self, group_id: str, topic_id: uuid.UUID, partition: int) -> tuple[ErrorCode, str | None]: ...


class GroupShareProtocol(GroupConsumerBase):
    """The share groups of the ``GroupCoordinator`` (a part of it; see the module docstring)."""

    share_groups: dict[str, ShareGroup]
    _sg_expiring: set[str]
    _share_persister_source: Callable[[], SharePersister | None]
    _group_configs_source: Callable[[], ShareGroupConfigs | None]

    def _init_share_protocol(self) -> None:
        """Called by ``GroupCoordinator.__init__``."""
        self.share_groups = {}
        self._sg_expiring = set()
        self._share_persister_source = lambda: None
        self._group_configs_source = lambda: None

    def use_share_persister(self, source: Callable[[], SharePersister | None]) -> None:
        """Where the share persister comes from (the broker passes its services' ``share_persister``, read at
        each use since the services are built after the coordinator)."""
        self._share_persister_source = source

    @property
    def share_persister(self) -> SharePersister | None:
        return self._share_persister_source()

    def use_group_configs(self, source: Callable[[], ShareGroupConfigs | None]) -> None:
        """Where the groups' own configs come from (the broker's ``group_configs``, read at each heartbeat)."""
        self._group_configs_source = source

    def _apply_group_config(self, group: ShareGroup) -> None:
        """A group's ``share.session.timeout.ms`` / ``share.heartbeat.interval.ms`` over the broker defaults."""
        configs = self._group_configs_source()
        if configs is not None:
            settings = configs.share_config(group.group_id)
            group.session_timeout_ms = settings.session_timeout_ms
            group.heartbeat_interval_ms = settings.heartbeat_interval_ms

    def _share_setting(self, key: str) -> Any:
        return self._setting(key)  # its documented default when the config lacks it (tests hand a dict)

    @property
    def share_groups_enabled(self) -> bool:
        """``group.share.enable``: whether the share group APIs are served and advertised."""
        return bool(self._share_setting("group.share.enable"))

    def _new_share_group(self, group_id: str) -> ShareGroup:
        return ShareGroup(
            group_id,
            session_timeout_ms=self._share_setting("group.share.session.timeout.ms"),
            heartbeat_interval_ms=self._share_setting("group.share.heartbeat.interval.ms"),
            max_size=self._share_setting("group.share.max.size"),
        )

    # -- queries ------------------------------------------------------------------------------------------------
    def is_share_group(self, group_id: str) -> bool:
        g = self.share_groups.get(group_id)
        return g is not None and g.state is not ShareGroupState.DEAD

    def share_group_ids(self) -> list[str]:
        """The share groups coordinated here (for the admin APIs and ``kafkalog groups``)."""
        return [gid for gid, _ in self.list_share_groups()]

    def list_share_groups(self) -> list[tuple[str, str]]:
        """(group id, state) of every share group coordinated here."""
        return [
            (gid, g.state.value)
            for gid, g in sorted(self.share_groups.items())
            if self.partition_of(gid) in self.loaded and g.state is not ShareGroupState.DEAD
        ]

    def describe_share_group(self, group_id: str) -> ShareGroup:
        """The share group for ShareGroupDescribe. Raises ``GroupError``: INVALID_GROUP_ID, NOT_COORDINATOR,
        COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (unknown, or of another type; Kafka's messages)."""
        self._check(group_id)
        if self.is_share_group(group_id):
            return self.share_groups[group_id]
        if self._other_group_type(group_id) is not None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")

    def share_groups_by_state(self) -> dict[str, int]:
        counts = dict.fromkeys((s.value for s in ShareGroupState), 0)
        for gid, g in list(self.share_groups.items()):
            if self.partition_of(gid) in self.loaded:
                counts[g.state.value] += 1
        return counts

    def _other_group_type(self, group_id: str) -> str | None:
        """ "consumer" or "classic" when ``group_id`` names a group of another type (or has classic offsets)."""
        if group_id in self.consumer_groups:
            return "consumer"
        if group_id in self.groups or group_id in self.store.offsets or group_id in self.store.groups:
            return "classic"
        return None

    # -- ShareGroupHeartbeat ------------------------------------------------------------------------------------
    async def share_group_heartbeat(
        self, request: ShareGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> ShareHeartbeatOutcome:
        """One ShareGroupHeartbeat, authorized: the outcome once its records are acknowledged. Raises ``GroupError``."""
        group_id = request.group_id
        self._check(group_id)
        validate_heartbeat(
            request.member_id, request.member_epoch, request.rack_id, request.subscribed_topic_names
        )  # Kafka checks the request before the group
        async with self._lock(group_id):
            self._check(group_id)  # it may have moved while this waited
            if self._other_group_type(group_id) is not None:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
            group = self.share_groups.get(group_id)
            created = group is None or group.state is ShareGroupState.DEAD
            if created:
                if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:  # Kafka's two lookups, two messages
                    raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
                if request.member_epoch != 0:
                    raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
                group = self._new_share_group(group_id)
            assert group is not None, "created above when missing"
            self._apply_group_config(group)
            topics = self.topics_view()
            joining_names = request.subscribed_topic_names or () if request.member_epoch >= 0 else ()
            if request.member_epoch >= 0:
                if created:
                    self.share_groups[group_id] = group
                try:
                    await self._initialize_share_partitions(group_id, group, topics, joining_names)
                finally:
                    if created and group.group_epoch == 0 and not group.members and not group.initialized:
                        self.share_groups.pop(group_id, None)
            now = self.now()
            outcome = group.heartbeat(
                request.member_id,
                request.member_epoch,
                request.rack_id,
                request.subscribed_topic_names,
                topics,
                now,
                client_id=client_id,
                client_host=client_host,
            )
            if not outcome.records:
                return outcome
            if created:
                self.share_groups[group_id] = group
            code = await self._append(
                group_id, records_batch([encode_record(rec) for rec in outcome.records], now), nothing
            )
            if code != ErrorCode.NONE:
                group.restore(outcome.snapshot)
                if created and group.group_epoch == 0 and self.share_groups.get(group_id) is group:
                    del self.share_groups[group_id]
                raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")
            return outcome

    async def _initialize_share_partitions(
        self, group_id: str, group: ShareGroup, topics: TopicsView, extra_names: Any
    ) -> None:
        """Initialize the share state of the subscribed partitions that have none yet, delete that of deleted
        topics (best effort), and record both (record 15). Hold the group's lock. A failed write raises
        ``GroupError``."""
        needed = group.partitions_to_initialize(topics, extra_names)
        gone = group.deleted_topics(topics)
        if not needed and not gone:
            return
        done: dict[uuid.UUID, tuple[str, set[int]]] = {}
        persister = self.share_persister
        if persister is not None and gone:
            stale = [(t, p) for t, (_, parts) in gone.items() for p in sorted(parts)]
            deleted = await asyncio.gather(
                *(persister.delete(group_id, t, p) for t, p in stale), return_exceptions=True
            )
            for (t, p), result in zip(stale, deleted, strict=True):
                if isinstance(result, BaseException) or result[0] != ErrorCode.NONE:
                    log.warning("group %s: deleting the share state of deleted topic %s-%d: %r", group_id, t, p, result)
        if persister is None:
            done = {t: (name, set(parts)) for t, (name, parts) in needed.items()}
        else:
            state_epoch = group.group_epoch + 1
            jobs = [(t, name, p) for t, (name, parts) in needed.items() for p in sorted(parts)]
            results = await asyncio.gather(
                *(persister.initialize(group_id, t, p, state_epoch, -1) for t, _, p in jobs), return_exceptions=True
            )
            for (t, name, p), result in zip(jobs, results, strict=True):
                if isinstance(result, BaseException):
                    log.warning("group %s: initializing share state of %s-%d failed: %r", group_id, name, p, result)
                elif result[0] != ErrorCode.NONE:
                    log.warning("group %s: initializing share state of %s-%d: %s", group_id, name, p, result[0].name)
                else:
                    done.setdefault(t, (name, set()))[1].add(p)
        snap = group.snapshot()
        records = group.mark_initialized(done, removed=gone)
        if not records:
            return
        code = await self._append(group_id, records_batch([encode_record(r) for r in records], self.now()), nothing)
        if code != ErrorCode.NONE:
            group.restore(snap)
            raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")

    # -- DeleteGroups ---------------------------------------------------------------------------------------------
    async def delete_share_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups of a share group: NON_EMPTY_GROUP with members; else the share state of its partitions is
        deleted (the persister) and the group's tombstones written."""
        async with self._lock(group_id):
            group = self.share_groups.get(group_id)
            if group is None or group.state is ShareGroupState.DEAD:
                return ErrorCode.GROUP_ID_NOT_FOUND
            if not group.is_empty:
                return ErrorCode.NON_EMPTY_GROUP
            persister = self.share_persister
            if persister is not None:
                parts = group.initialized_partitions()
                results = await asyncio.gather(*(persister.delete(group_id, t, p) for t, p in parts))
                for code, message in results:
                    if code != ErrorCode.NONE:
                        log.warning("group %s: deleting share state failed: %s %s", group_id, code.name, message)
                        return code
            records = group.delete_records()

            def committed() -> None:
                for rec in records:
                    group.replay(rec)
                if self.share_groups.get(group_id) is group:
                    del self.share_groups[group_id]

            code = await self._append(
                group_id, records_batch([encode_record(r) for r in records], self.now()), committed
            )
            return ErrorCode.NONE if code == ErrorCode.NONE else write_error(code)

    # -- loading and expiry -----------------------------------------------------------------------------------------
    def load_share_groups(self, partition: int, records_by_group: Mapping[str, list[Any]]) -> int:
        """Replay the share records loaded for ``partition``; the number of groups rebuilt."""
        count = 0
        for group_id, records in records_by_group.items():
            group = self._new_share_group(group_id)
            for rec in records:
                group.replay(rec)
            if group.state is ShareGroupState.DEAD or (group.is_empty and group.group_epoch == 0):
                continue
            self.share_groups[group_id] = group
            count += 1
        return count

    def unload_share_groups(self, partition: int) -> None:
        for group_id in [g for g in self.share_groups if self.partition_of(g) == partition]:
            del self.share_groups[group_id]

    def share_tick(self) -> None:
        """Start the expiry of every share group with a session deadline passed (or members without one)."""
        now = self.now()
        loop = asyncio.get_running_loop()
        for group_id, group in list(self.share_groups.items()):
            if group_id in self._sg_expiring or self.partition_of(group_id) not in self.loaded:
                continue
            deadline = group.next_deadline_ms()
            fresh = any(m.session_deadline_ms <= 0 for m in group.members.values())
            if fresh or (deadline is not None and deadline <= now):
                self._sg_expiring.add(group_id)
                loop.create_task(self._expire_share_group(group_id))

    async def _expire_share_group(self, group_id: str) -> None:
        try:
            async with self._lock(group_id):
                group = self.share_groups.get(group_id)
                if group is None or self.coordinator_error(group_id) != ErrorCode.NONE:
                    return
                snap = group.snapshot()
                records = group.expire(self.now(), self.topics_view())
                if not records:
                    return
                code = await self._append(
                    group_id, records_batch([encode_record(r) for r in records], self.now()), nothing
                )
                if code != ErrorCode.NONE:
                    group.restore(snap)
                    log.warning("group %s: writing the expiry of share members failed: %s", group_id, code.name)
                else:
                    log.info("group %s: removed share members whose session timed out", group_id)
        finally:
            self._sg_expiring.discard(group_id)


__all__ = ["SHARE", "GroupShareProtocol", "SharePersister"]
