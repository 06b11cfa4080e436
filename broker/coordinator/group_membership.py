"""``GroupMembership``: JoinGroup, SyncGroup, Heartbeat and LeaveGroup of the ``GroupCoordinator``: the long
polls that wait on a rebalance, session expiry, and the GroupMetadataValue write of a completed rebalance.

A JoinGroup waits until its rebalance completes (every member rejoined, or the rebalance timeout passed:
those that did not are removed). A follower's SyncGroup waits for the leader's, which stores the group
(Kafka's ``storeGroup``) before any member gets its assignment. A client that disconnects while its
JoinGroup waits is removed from the group, so it does not hold the rebalance; one whose SyncGroup waits gets
REBALANCE_IN_PROGRESS. The state machine is ``group.Group``; this part holds the waiting futures and
completes them. Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging

from spark_kafkalog.protocol import ErrorCode

from .group import Group, GroupError, GroupState, JoinRequest, JoinResult
from .group_consumer_protocol import GroupConsumerProtocol
from .offset_store import group_metadata_batch, group_metadata_value

log = logging.getLogger("kafkalog.coordinator")


class GroupMembership(GroupConsumerProtocol):
    """The membership APIs of the ``GroupCoordinator`` (a part of it; see ``group_coordinator``); over the
    consumer group part: a JoinGroup, SyncGroup or Heartbeat for a KIP-848 consumer group goes to it (classic
    members of a consumer group, Kafka's online migration)."""

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
        self._refuse_share_group(
            group_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL, f"Group {group_id} is a share group."
        )  # Kafka 4.4: a JoinGroup for a share group
        lo, hi = self.config["group.min.session.timeout.ms"], self.config["group.max.session.timeout.ms"]
        if not lo <= session_timeout_ms <= hi:
            raise GroupError(
                ErrorCode.INVALID_SESSION_TIMEOUT,
                f"session timeout {session_timeout_ms} ms is outside [{lo}, {hi}] (group.min/max.session.timeout.ms)",
            )
        request = JoinRequest(
            member_id=member_id,
            group_instance_id=group_instance_id,
            client_id=client_id,
            client_host=client_host,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            protocol_type=protocol_type,
            protocols=protocols,
            require_known_member_id=require_known_member_id,
        )
        mixed = await self.classic_join_consumer_group(group_id, request)
        if mixed is not None:  # a classic member of a KIP-848 consumer group (group_consumer_classic)
            return mixed
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"group {group_id} does not exist")
            group = self.groups[group_id] = self._new_group(group_id)
        now = self.now()
        requested_id = member_id
        member_id, immediate = group.join(request, now=now)
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
        mixed = self.classic_sync_consumer_group(
            group_id,
            member_id=member_id,
            group_instance_id=group_instance_id,
            generation=generation,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
        )
        if mixed is not None:
            return mixed
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
        if self.classic_heartbeat_consumer_group(
            group_id, member_id=member_id, group_instance_id=group_instance_id, generation=generation
        ):
            return
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

    def tick(self) -> None:
        """Expire sessions and complete rebalances whose time has come."""
        now = self.now()
        for group in list(self.groups.values()):
            for mid in group.expired_members(now):
                log.info("group %s: member %s session expired", group.group_id, mid)
                group.remove_member(mid, now)
            self._after_change(group)

    async def _store_group(self, group: Group) -> ErrorCode:
        now = self.now()
        value = group_metadata_value(group, now)

        def remember() -> None:
            self.store.groups[group.group_id] = value

        return await self._append(group.group_id, group_metadata_batch(group.group_id, value, now), remember)
