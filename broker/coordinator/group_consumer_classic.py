"""``GroupConsumerClassic``: the classic protocol's side of the ``GroupCoordinator``'s KIP-848 consumer groups:
classic members of a consumer group (Kafka's online migration) and the conversion of a group between the two
kinds (``group.consumer.migration.policy``, default ``bidirectional``; Kafka's rules). A part of the coordinator,
between ``group_consumer_base`` and ``group_consumer_protocol``.

Upgrade (started by ``GroupConsumerProtocol.consumer_group_heartbeat``): a ConsumerGroupHeartbeat joining
(epoch 0) a classic group without members deletes it (a GroupMetadata tombstone in the same batch; its committed
offsets stay) and creates the consumer group, whatever the policy (Kafka's ``maybeDeleteEmptyClassicGroup``). One
joining a classic group with members converts it online when the policy allows an upgrade
(``ConsumerGroup.from_classic_group``: its members become classic members of the consumer group at the classic
generation, keeping their partitions; the classic requests waiting are told REBALANCE_IN_PROGRESS,
``_fail_classic_waiters``), else GROUP_ID_NOT_FOUND.

Classic members of a consumer group keep using JoinGroup (``classic_join_consumer_group``: answered at once,
their member epoch as the generation, no leader duties), SyncGroup (``classic_sync_consumer_group``: their
assignment from the consumer group's reconciliation, as a ConsumerProtocolAssignment), Heartbeat
(``classic_heartbeat_consumer_group``: REBALANCE_IN_PROGRESS when they must rejoin) and LeaveGroup
(``classic_leave_consumer_group``); a JoinGroup is INCONSISTENT_GROUP_PROTOCOL when the policy is ``disabled``. A
JoinGroup for an empty consumer group deletes it (tombstones) so a classic group takes its place.

Downgrade (policy ``downgrade`` or ``bidirectional``; ``_downgrade``/``_downgraded``): when the last
consumer-protocol member leaves (epoch -1) or is fenced by expiry while classic members remain, the consumer
group's records are tombstoned and a classic GroupMetadata with those members (their protocols, their
assignments as ConsumerProtocolAssignments) is written in the same batch; the classic group then rebalances
(PreparingRebalance), so its members rejoin (Kafka's ``convertToClassicGroup``).

Event-loop only.
"""

from __future__ import annotations

import logging
import uuid

from spark_kafkalog.protocol import ErrorCode

from .consumer.classic_members import encode_classic_assignment, subscription_version
from .consumer.group import ConsumerGroup
from .consumer.record_codec import encode_record
from .consumer.records import CoordinatorRecord
from .group import Group, GroupError, GroupState, JoinRequest, JoinResult, Member, select_protocol
from .group_consumer_base import CONSUMER, GroupConsumerBase, nothing, records_batch, write_error
from .offset_store import group_metadata_value
from .offsets_topic import encode_group_key, encode_group_value

log = logging.getLogger("kafkalog.coordinator")


class GroupConsumerClassic(GroupConsumerBase):
    """The classic members of consumer groups and the conversions (see the module docstring)."""

    def _fail_classic_waiters(self, group_id: str, code: ErrorCode, message: str) -> None:
        for waiters in (self._join_waiters.pop(group_id, {}), self._sync_waiters.pop(group_id, {})):
            for fut in waiters.values():
                if not fut.done():
                    fut.set_exception(GroupError(code, message))

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
            version = subscription_version(chosen)
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
        value = group_metadata_value(classic, now)
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
    async def classic_join_consumer_group(self, group_id: str, request: JoinRequest) -> JoinResult | None:
        """A JoinGroup (already checked by ``join_group``) for a consumer group: None when ``group_id`` is no
        consumer group, or an empty one (deleted here, so a classic group takes its place). Otherwise the classic
        member joins the consumer group (Kafka's online migration: ``ConsumerGroup.classic_join``) and the answer
        is immediate: its epoch as the generation, no leader duties (an empty leader, no members). Raises
        ``GroupError``: INCONSISTENT_GROUP_PROTOCOL when ``group.consumer.migration.policy`` is ``disabled``,
        MEMBER_ID_REQUIRED (v4+, no member id, not static) with the id to rejoin with, the group's errors."""
        async with self._locked_consumer_group(group_id) as group:
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
            member_id, group_instance_id = request.member_id, request.group_instance_id
            if not member_id:
                member_id = f"{group_instance_id or request.client_id}-{uuid.uuid4()}"
                if request.require_known_member_id and group_instance_id is None:
                    raise GroupError(
                        ErrorCode.MEMBER_ID_REQUIRED, "rejoin with the assigned member id", member_id=member_id
                    )
            outcome = group.classic_join(
                member_id=member_id,
                instance_id=group_instance_id,
                protocol_type=request.protocol_type,
                protocols=request.protocols,
                session_timeout_ms=request.session_timeout_ms,
                rebalance_timeout_ms=request.rebalance_timeout_ms,
                client_id=request.client_id,
                client_host=request.client_host,
                topics=self.topics_view(),
                now_ms=self.now(),
            )
            if outcome.records:
                pairs = [encode_record(rec) for rec in outcome.records]
                code = await self._append(group_id, records_batch(pairs, self.now()), nothing)
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
        version = subscription_version(protocols[0].metadata) if protocols else 0
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
        async with self._locked_consumer_group(group_id) as group:
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
                code = await self._append(
                    group_id, records_batch([encode_record(r) for r in records], self.now()), nothing
                )
                if code != ErrorCode.NONE:
                    group.restore(snap)
                    raise GroupError(write_error(code), f"writing group {group_id}'s records failed: {code.name}")
            self._track_assignment_epochs(group_id, group)
            return codes


__all__ = ["GroupConsumerClassic"]
