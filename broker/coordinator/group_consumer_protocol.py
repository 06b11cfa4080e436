"""``GroupConsumerProtocol``: the KIP-848 consumer groups of the ``GroupCoordinator`` (ConsumerGroupHeartbeat,
ConsumerGroupDescribe, their persistence, loading and expiry), beside the classic groups of ``group_membership``.

One namespace: a group id names either a classic group (``groups``) or a consumer group (``consumer_groups``),
never both; offsets are shared by both kinds (``store.offsets``). The state machine of a consumer group is
``consumer.group.ConsumerGroup`` (pure); this part holds the groups, serializes each group's requests with a
per-group lock, persists what the group emits and reverts it when the write fails.

Persistence: a heartbeat's records (``consumer.records``, Kafka's types 3-8 and 16) are appended to the group's
``__consumer_offsets`` partition as one batch (acks=all, as classic writes) and the answer is sent only after
the append was acknowledged; a failed append reverts the group (``ConsumerGroup.revert``) and is answered with
Kafka's mapping of the write error (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE;
NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR; others UNKNOWN_SERVER_ERROR). Requests of one group wait for the
previous one's append (the group's records stay in log order); different groups proceed concurrently.

Loading (coordinator failover): ``OffsetStore.load_partition`` keeps the consumer records of the partition by
key; ``load_consumer_groups`` replays them (in the order of their last writes) into new ``ConsumerGroup``s.
Members loaded get a fresh session on the next tick (as Kafka schedules their timers on load).

Expiry: ``consumer_tick`` (from the coordinator's ticker) starts, per group with a session or rebalance
deadline passed (or members loaded without one), a task that runs ``ConsumerGroup.expire`` under the group's
lock and appends its records.

Topics: ``MetadataTopicsView`` is the model's ``TopicsView`` over the broker's ``MetadataCache``; its
``version`` moves when a topic is created, deleted or grows, so the model re-resolves regular expressions and
bumps the group epoch on the next heartbeat. Regex subscriptions see only the topics the heartbeat's
principal may DESCRIBE (Kafka 4.x filters resolved regexes by the member's authorization).

Conversion (``group.consumer.migration.policy``, default ``bidirectional``; Kafka's rules): a
ConsumerGroupHeartbeat joining (epoch 0) a classic group without members deletes it (a GroupMetadata tombstone in
the same batch; its committed offsets stay) and creates the consumer group, whatever the policy (Kafka's
``maybeDeleteEmptyClassicGroup``). One joining a classic group with members converts it online when the policy
allows an upgrade (``ConsumerGroup.from_classic_group``: its members become classic members of the consumer group
at the classic generation, keeping their partitions; the classic requests waiting are told REBALANCE_IN_PROGRESS),
else GROUP_ID_NOT_FOUND. Classic members of a consumer group keep using JoinGroup (answered at once, their member
epoch as the generation, no leader duties), SyncGroup (their assignment from the consumer group's reconciliation,
as a ConsumerProtocolAssignment), Heartbeat (REBALANCE_IN_PROGRESS when they must rejoin) and LeaveGroup; a
JoinGroup is INCONSISTENT_GROUP_PROTOCOL when the policy is ``disabled``. A JoinGroup for an empty consumer group
deletes it (tombstones) so a classic group takes its place. Downgrade (policy ``downgrade`` or
``bidirectional``): when the last consumer-protocol member leaves (epoch -1) or is fenced by expiry while classic
members remain, the consumer group's records are tombstoned and a classic GroupMetadata with those members (their
protocols, their assignments as ConsumerProtocolAssignments) is written in the same batch; the classic group
then rebalances (PreparingRebalance), so its members rejoin (Kafka's ``convertToClassicGroup``).

Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from broker.config_keys import KEYS_BY_NAME
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch_builder import RecordBatchBuilder

from .consumer.assignors import assignors_from_config
from .consumer.classic_members import encode_classic_assignment
from .consumer.group import ConsumerGroup, ConsumerGroupState, HeartbeatOutcome
from .consumer.record_codec import encode_record
from .consumer.records import CoordinatorRecord
from .group import Group, GroupError, GroupState, JoinResult, Member, select_protocol
from .group_coordinator_base import GroupCoordinatorBase
from .offsets_topic import GroupMetadataValue, MemberMetadata, encode_group_key, encode_group_value, encode_offset_key

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache
    from spark_kafkalog.protocol.apis.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest

log = logging.getLogger("kafkalog.coordinator")

CLASSIC = "classic"
CONSUMER = "consumer"

_WRITE_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.NOT_COORDINATOR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
}


def write_error(code: ErrorCode) -> ErrorCode:
    """The error a group request answers when its records could not be written (Kafka's mapping)."""
    return _WRITE_ERRORS.get(code, ErrorCode.UNKNOWN_SERVER_ERROR)


class MetadataTopicsView:
    """The model's ``TopicsView`` over the broker's ``MetadataCache`` (one per request; cheap). ``version`` is
    the coordinator's count of topic set changes (``TopicsVersion``). ``describable`` filters what a regular
    expression may match (None: every topic)."""

    def __init__(self, metadata: MetadataCache, version: int, describable: Callable[[str], bool] | None = None):
        self._metadata = metadata
        self._topics = metadata.topics  # one consistent snapshot (the cache swaps dicts, never mutates them)
        self._version = version
        self._describable = describable

    @property
    def version(self) -> int:
        return self._version

    def topic_id(self, name: str) -> uuid.UUID | None:
        t = self._topics.get(name)
        return None if t is None else t.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        name = self._metadata.topic_by_id(topic_id)
        return name if name is not None and name in self._topics else None

    def topic_names(self) -> Collection[str]:
        names = [n for n in self._topics if not n.startswith("__")]  # internal topics are never matched
        if self._describable is None:
            return names
        return [n for n in names if self._describable(n)]

    def partition_count(self, topic_id: uuid.UUID) -> int:
        name = self.topic_name(topic_id)
        return -1 if name is None else self._topics[name].num_partitions

    def partition_racks(self, topic_id: uuid.UUID, partition: int) -> frozenset[str]:
        name = self.topic_name(topic_id)
        if name is None:
            return frozenset()
        replicas = self._topics[name].replicas.get(partition, ())
        brokers = self._metadata.brokers
        return frozenset(r for b in replicas if (info := brokers.get(b)) is not None and (r := info.rack) is not None)


class TopicsVersion:
    """Counts changes of the topic set (names, ids, partition counts) seen in a ``MetadataCache``: the
    ``TopicsView.version`` that tells the groups to re-resolve regexes and re-check their subscriptions."""

    def __init__(self) -> None:
        self._seen: object = None
        self._fingerprint: frozenset[tuple[str, uuid.UUID, int]] = frozenset()
        self.version = 0

    def current(self, metadata: MetadataCache) -> int:
        topics = metadata.topics
        if topics is not self._seen:  # a new snapshot: did the topic set change, or only leaders/ISRs?
            self._seen = topics
            fingerprint = frozenset((n, t.topic_id, t.num_partitions) for n, t in topics.items())
            if fingerprint != self._fingerprint:
                self._fingerprint = fingerprint
                self.version += 1
        return self.version


class GroupConsumerProtocol(GroupCoordinatorBase):
    """The consumer groups of the ``GroupCoordinator`` (a part of it; see ``group_coordinator``)."""

    metadata: MetadataCache
    consumer_groups: dict[str, ConsumerGroup]
    _cg_locks: dict[str, asyncio.Lock]
    _cg_expiring: set[str]
    _topics_version: TopicsVersion

    def _init_consumer_protocol(self, metadata: MetadataCache) -> None:
        """Called by ``GroupCoordinator.__init__``; validates the consumer group config (ValueError)."""
        self.metadata = metadata
        self.consumer_groups = {}
        self._cg_locks = {}
        self._cg_expiring = set()
        self._topics_version = TopicsVersion()
        self._assignment_epochs: dict[str, dict[str, dict[tuple[uuid.UUID, int], int]]] = {}
        self._pending_classic_values: dict[str, object] = {}
        protocols = {p.lower() for p in self._setting("group.coordinator.rebalance.protocols")}
        unknown = protocols - {CLASSIC, CONSUMER}
        if unknown or CLASSIC not in protocols:
            raise ValueError(
                f"group.coordinator.rebalance.protocols={sorted(protocols)}: must contain classic and may contain "
                f"consumer (unknown: {sorted(unknown)})"
            )
        self._assignors = assignors_from_config(self._setting("group.consumer.assignors"))

    def _setting(self, key: str) -> Any:
        """A consumer group config value (its documented default when the config lacks it: tests hand a dict)."""
        try:
            return self.config[key]
        except KeyError:
            return KEYS_BY_NAME[key].default

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

    def topics_view(self, describable: Callable[[str], bool] | None = None) -> MetadataTopicsView:
        return MetadataTopicsView(self.metadata, self._topics_version.current(self.metadata), describable)

    def consumer_group(self, group_id: str) -> ConsumerGroup:
        """The consumer group for ConsumerGroupDescribe. Raises ``GroupError``: INVALID_GROUP_ID, NOT_COORDINATOR,
        COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND (unknown, or a classic group; Kafka's messages)."""
        self._check(group_id)
        group = self.consumer_groups.get(group_id)
        if group is not None and group.state is not ConsumerGroupState.DEAD:
            return group
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
    def _consumer_group_settings(self) -> dict[str, Any]:
        return {
            "assignors": self._assignors,
            "default_assignor": next(iter(self._assignors)),
            "session_timeout_ms": self._setting("group.consumer.session.timeout.ms"),
            "heartbeat_interval_ms": self._setting("group.consumer.heartbeat.interval.ms"),
            "max_size": self._setting("group.consumer.max.size"),
        }

    def _new_consumer_group(self, group_id: str) -> ConsumerGroup:
        return ConsumerGroup(group_id, **self._consumer_group_settings())

    @property
    def migration_policy(self) -> str:
        """``group.consumer.migration.policy``, lower case."""
        return str(self._setting("group.consumer.migration.policy")).lower()

    def _fail_classic_waiters(self, group_id: str, code: ErrorCode, message: str) -> None:
        for waiters in (self._join_waiters.pop(group_id, {}), self._sync_waiters.pop(group_id, {})):
            for fut in waiters.values():
                if not fut.done():
                    fut.set_exception(GroupError(code, message))

    def _lock(self, group_id: str) -> asyncio.Lock:
        lock = self._cg_locks.get(group_id)
        if lock is None:
            lock = self._cg_locks[group_id] = asyncio.Lock()
        return lock

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

            code = await self._append(group_id, _batch(pairs, now), committed)
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

    # -- the downgrade ---------------------------------------------------------------------------------------------
    def _downgrade(self, group: ConsumerGroup, now: int) -> tuple[list[tuple[bytes, bytes | None]], Group] | None:
        """When ``group`` (after a change) has members and all of them use the classic protocol, and the policy
        allows a downgrade: the records that turn it back into a classic group (the consumer group's tombstones,
        then the classic GroupMetadata) and that classic group, rebalancing so its members rejoin (Kafka's
        ``convertToClassicGroup``). None otherwise. Nothing is applied."""
        if self.migration_policy not in ("downgrade", "bidirectional") or not group.members:
            return None
        metas = [m.classic_member_metadata for m in group.members.values()]
        if any(meta is None for meta in metas):
            return None
        try:
            protocol = select_protocol([[p.name for p in meta.supported_protocols] for meta in metas if meta])
        except ValueError:
            return None
        topic_name = self.topics_view().topic_name
        classic = self._new_group(group.group_id)
        classic.generation = group.group_epoch
        classic.protocol_type = CONSUMER
        classic.protocol_name = protocol
        for m in sorted(group.members.values(), key=lambda m: m.member_id):
            meta = m.classic_member_metadata
            assert meta is not None, "checked above"
            protocols = [(p.name, p.metadata) for p in meta.supported_protocols]
            chosen = dict(protocols).get(protocol, b"")
            version = min(max(int.from_bytes(chosen[:2], "big", signed=True), 0), 3) if len(chosen) >= 2 else 0
            classic.members[m.member_id] = Member(
                m.member_id, m.instance_id, m.client_id, m.client_host, meta.session_timeout_ms,
                m.rebalance_timeout_ms, protocols, now, False,
                encode_classic_assignment(m.assigned_partitions, topic_name, version),
            )  # fmt: skip
            if m.instance_id is not None:
                classic.static_members[m.instance_id] = m.member_id
        classic.leader_id = next(iter(classic.members))
        classic.state = GroupState.STABLE
        classic.state_timestamp_ms = now
        value = GroupMetadataValue(
            protocol_type=CONSUMER,
            generation=classic.generation,
            protocol=protocol,
            leader=classic.leader_id,
            current_state_timestamp=now,
            members=[
                MemberMetadata(
                    member_id=cm.member_id,
                    group_instance_id=cm.group_instance_id,
                    client_id=cm.client_id,
                    client_host=cm.client_host,
                    rebalance_timeout=cm.rebalance_timeout_ms,
                    session_timeout=cm.session_timeout_ms,
                    subscription=cm.metadata_for(protocol),
                    assignment=cm.assignment,
                )  # fmt: skip
                for cm in classic.members.values()
            ],
        )
        pairs: list[tuple[bytes, bytes | None]] = [encode_record(rec) for rec in group.delete_records()]
        pairs.append((encode_group_key(group.group_id), encode_group_value(value)))
        classic.prepare_rebalance(now)  # its members rejoin as a classic group (Kafka rebalances it at once)
        self._pending_classic_values[group.group_id] = value
        return pairs, classic

    def _downgraded(self, group_id: str, group: ConsumerGroup, classic: Group) -> None:
        """The downgrade's records are written: the classic group takes the consumer group's place."""
        for rec in group.delete_records():
            group.replay(rec)
        if self.consumer_groups.get(group_id) is group:
            del self.consumer_groups[group_id]
        self._assignment_epochs.pop(group_id, None)
        self.groups[group_id] = classic
        value = self._pending_classic_values.pop(group_id, None)
        if value is not None:
            self.store.groups[group_id] = value
        log.info("group %s: converted the consumer group to a classic group (every member uses JoinGroup)", group_id)

    # -- the classic side of one namespace ---------------------------------------------------------------------
    async def classic_join_consumer_group(
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
    ) -> JoinResult | None:
        """A JoinGroup (already checked by ``join_group``) for a consumer group: None when ``group_id`` is no
        consumer group, or an empty one (deleted here, so a classic group takes its place). Otherwise the classic
        member joins the consumer group (Kafka's online migration: ``ConsumerGroup.classic_join``) and the answer
        is immediate: its epoch as the generation, no leader duties (an empty leader, no members). Raises
        ``GroupError``: INCONSISTENT_GROUP_PROTOCOL when ``group.consumer.migration.policy`` is ``disabled``,
        MEMBER_ID_REQUIRED (v4+, no member id, not static) with the id to rejoin with, the group's errors."""
        if group_id not in self.consumer_groups:
            return None
        async with self._lock(group_id):
            group = self.consumer_groups.get(group_id)
            if group is None:
                return None
            if group.is_empty:
                await self._delete_consumer_group_records(group_id, group, offsets=())
                return None
            if self.migration_policy == "disabled":
                raise GroupError(
                    ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                    f"Cannot join the consumer group {group_id} with the classic protocol because the group "
                    "migration is disabled.",
                )
            if not member_id:
                member_id = f"{group_instance_id or client_id}-{uuid.uuid4()}"
                if require_known_member_id and group_instance_id is None:
                    raise GroupError(
                        ErrorCode.MEMBER_ID_REQUIRED, "rejoin with the assigned member id", member_id=member_id
                    )
            outcome = group.classic_join(
                member_id=member_id,
                instance_id=group_instance_id,
                protocol_type=protocol_type,
                protocols=protocols,
                session_timeout_ms=session_timeout_ms,
                rebalance_timeout_ms=rebalance_timeout_ms,
                client_id=client_id,
                client_host=client_host,
                topics=self.topics_view(),
                now_ms=self.now(),
            )
            if outcome.records:
                pairs = [encode_record(rec) for rec in outcome.records]
                code = await self._append(group_id, _batch(pairs, self.now()), _nothing)
                if code != ErrorCode.NONE:
                    group.revert(outcome.snapshot)
                    raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")
            self._track_assignment_epochs(group_id, group)
            return JoinResult(outcome.member_id, outcome.generation_id, CONSUMER, outcome.protocol_name, "", ())

    def classic_sync_consumer_group(
        self,
        group_id: str,
        *,
        member_id: str,
        group_instance_id: str | None,
        generation: int,
        protocol_type: str | None,
        protocol_name: str | None,
    ) -> tuple[bytes, str | None, str | None] | None:
        """SyncGroup of a classic member of a consumer group: (its assignment as a ConsumerProtocolAssignment
        of the version its subscription has, "consumer", its protocol), at once; None for any other group. Raises
        ``GroupError`` (``ConsumerGroup.classic_sync``)."""
        group = self.consumer_groups.get(group_id)
        if group is None:
            return None
        assignment = group.classic_sync(
            member_id=member_id,
            instance_id=group_instance_id,
            generation_id=generation,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            now_ms=self.now(),
        )
        member = group.members[member_id] if member_id in group.members else None
        meta = member.classic_member_metadata if member is not None else None
        protocols = meta.supported_protocols if meta is not None else ()
        name = protocols[0].name if protocols else protocol_name
        version = 0
        if protocols and len(protocols[0].metadata) >= 2:
            version = min(max(int.from_bytes(protocols[0].metadata[:2], "big", signed=True), 0), 3)
        data = encode_classic_assignment(assignment, self.topics_view().topic_name, version)
        return data, CONSUMER, name

    def classic_heartbeat_consumer_group(
        self, group_id: str, *, member_id: str, group_instance_id: str | None, generation: int
    ) -> bool:
        """Heartbeat of a classic member of a consumer group (True), or False for any other group. Raises
        ``GroupError``: REBALANCE_IN_PROGRESS tells the member to rejoin (``ConsumerGroup.classic_heartbeat``)."""
        group = self.consumer_groups.get(group_id)
        if group is None:
            return False
        group.classic_heartbeat(
            member_id=member_id, instance_id=group_instance_id, generation_id=generation, now_ms=self.now()
        )
        return True

    async def classic_leave_consumer_group(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> list[ErrorCode] | None:
        """LeaveGroup against a consumer group: one error per member (each fenced, classic or not, as Kafka),
        the records of those that left appended together; None for any other group."""
        if group_id not in self.consumer_groups:
            return None
        async with self._lock(group_id):
            group = self.consumer_groups.get(group_id)
            if group is None:
                return None
            snap = group.snapshot()
            codes: list[ErrorCode] = []
            records: list[CoordinatorRecord] = []
            for member_id, instance_id in members:
                try:
                    records += group.classic_leave(
                        member_id=member_id, instance_id=instance_id, topics=self.topics_view()
                    )
                    codes.append(ErrorCode.NONE)
                except GroupError as e:
                    codes.append(e.error_code)
            if records:
                code = await self._append(group_id, _batch([encode_record(r) for r in records], self.now()), _nothing)
                if code != ErrorCode.NONE:
                    group.restore(snap)
                    raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")
            self._track_assignment_epochs(group_id, group)
            return codes

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

    async def _delete_consumer_group_records(
        self, group_id: str, group: ConsumerGroup, *, offsets: Collection[tuple[str, int]]
    ) -> None:
        """Append the offsets' tombstones and the group's (``ConsumerGroup.delete_records``); once acknowledged,
        replay them and forget the group. Raises ``GroupError`` when the write fails. Hold the group's lock."""
        now = self.now()
        records = group.delete_records()
        pairs: list[tuple[bytes, bytes | None]] = [(encode_offset_key(group_id, t, p), None) for t, p in offsets]
        pairs += [encode_record(rec) for rec in records]

        def committed() -> None:
            for rec in records:
                group.replay(rec)
            self.store.delete_offsets(group_id, offsets)
            if self.consumer_groups.get(group_id) is group:
                del self.consumer_groups[group_id]

        code = await self._append(group_id, _batch(pairs, now), committed)
        if code != ErrorCode.NONE:
            raise GroupError(write_error(code), f"deleting group {group_id} failed: {code.name}")

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

    def _track_assignment_epochs(self, group_id: str, group: ConsumerGroup) -> None:
        """Remember, per member, the epoch at which it got each partition it holds (KIP-1251's assignment epoch):
        a partition first seen held is stamped with the member's epoch then."""
        tracked = self._assignment_epochs.setdefault(group_id, {})
        for member_id in [m for m in tracked if m not in group.members]:
            del tracked[member_id]
        for member_id, m in group.members.items():
            held = {(t, p) for t, ps in m.assigned_partitions.items() for p in ps}
            held |= {(t, p) for t, ps in m.partitions_pending_revocation.items() for p in ps}
            epochs = tracked.setdefault(member_id, {})
            for key in [k for k in epochs if k not in held]:
                del epochs[key]
            for key in held:
                epochs.setdefault(key, m.member_epoch)

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
                code = await self._append(group_id, _batch(pairs, self.now()), _nothing)
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


def _nothing() -> None:
    return None


def _batch(pairs: list[tuple[bytes, bytes | None]], now_ms: int) -> bytearray:
    b = RecordBatchBuilder()
    for key, value in pairs:
        b.append(now_ms, key, value)
    return bytearray(b.build())


__all__ = [
    "CLASSIC",
    "CONSUMER",
    "CoordinatorRecord",
    "GroupConsumerProtocol",
    "MetadataTopicsView",
    "TopicsVersion",
    "write_error",
]
