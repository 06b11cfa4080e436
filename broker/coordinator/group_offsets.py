"""``GroupOffsets``: the committed offsets of the ``GroupCoordinator``'s groups: OffsetCommit, TxnOffsetCommit,
OffsetFetch, OffsetDelete, offset expiry (KIP-211) and the transaction markers that settle transactional offsets.

A commit is appended to the group's ``__consumer_offsets`` partition and reaches the cache (``OffsetStore``)
once acknowledged. Transactional offsets stay pending until their producer's COMMIT or ABORT marker is below
the high watermark (``scan_markers``, run by the ticker). Metadata longer than ``offset.metadata.max.bytes``
fails its partition with OFFSET_METADATA_TOO_LARGE. Event-loop only.
"""

from __future__ import annotations

import logging

from spark_kafkalog.protocol import ErrorCode

from .group import Group, GroupError, GroupState
from .group_consumer_protocol import GroupConsumerProtocol
from .offset_store import CommittedOffset, end_txn_marker, iter_log_batches, offset_commit_batch, tombstone_batch
from .offsets_topic import OFFSETS_TOPIC

log = logging.getLogger("kafkalog.coordinator")


class GroupOffsets(GroupConsumerProtocol):
    """The offset APIs of the ``GroupCoordinator`` (a part of it; see ``group_coordinator``); over the consumer
    group part, whose member-epoch checks the commits of consumer groups go through."""

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
            consumer = self.consumer_groups.get(group_id)
            if consumer is not None:  # Kafka: from the commit, never for a topic the group subscribes to
                subscribed = consumer.subscribed_topic_names()
                expired = [
                    tp
                    for tp, c in offsets.items()
                    if tp[0] not in subscribed
                    and (
                        now >= c.expire_timestamp
                        if c.expire_timestamp >= 0
                        else now - c.commit_timestamp >= retention_ms
                    )
                ]
            else:
                expired = _expired_offsets(group, offsets, now, retention_ms)
            if not expired:
                continue
            drop_group = (
                consumer is None and len(expired) == len(offsets) and (group is None or group.state is GroupState.EMPTY)
            )

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
        self._refuse_share_group(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        result: dict[tuple[str, int], ErrorCode] = {}
        if group_id in self.consumer_groups:  # a KIP-848 group: the member's epoch, unless no member is named
            result = self.consumer_commit_errors(group_id, member_id, generation, list(offsets), transactional=True)
            offsets = {tp: c for tp, c in offsets.items() if tp not in result}
        else:
            group = self.groups.get(group_id)
            if group is None:
                group = self.groups[group_id] = self._new_group(group_id)
            if member_id and member_id not in group.members:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"{member_id} is not a member of group {group_id}")
            if generation >= 0 and generation != group.generation:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"group {group_id} is at generation {group.generation}")
        limit = self.config["offset.metadata.max.bytes"]
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
        """Store offsets (acks=all); one error per partition. The group-level checks raise ``GroupError``; for a
        KIP-848 consumer group ``generation`` is the member epoch (``ConsumerGroup.validate_offset_commit``)."""
        self._check(group_id)
        self._refuse_share_group(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if group_id in self.consumer_groups:
            refused = self.consumer_commit_errors(group_id, member_id, generation, list(offsets))
            valid = {tp: c for tp, c in offsets.items() if tp not in refused}
            return {**refused, **(await self._store_offsets(group_id, valid) if valid else {})}
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
        return await self._store_offsets(group_id, offsets)

    async def _store_offsets(
        self, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]
    ) -> dict[tuple[str, int], ErrorCode]:
        """Append the offsets of a validated commit (OFFSET_METADATA_TOO_LARGE for metadata over the limit)."""
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
        self._refuse_share_group(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        cached = self.store.offsets.get(group_id, {})
        if tps is None:
            return dict(cached)
        return {tp: cached.get(tp) for tp in tps}

    async def delete_offsets(
        self, group_id: str, tps: list[tuple[str, int]]
    ) -> tuple[ErrorCode, dict[tuple[str, int], ErrorCode]]:
        """OffsetDelete: group error, per-partition errors (GROUP_SUBSCRIBED_TO_TOPIC for consumed topics)."""
        self._check(group_id)
        self._refuse_share_group(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        group = self.groups.get(group_id)
        consumer = self.consumer_groups.get(group_id)
        if group is None and consumer is None and group_id not in self.store.offsets:
            return ErrorCode.GROUP_ID_NOT_FOUND, {}
        subscribed = (_subscribed_topics(group) or set()) if group is not None else set()
        if consumer is not None:
            subscribed = consumer.subscribed_topic_names()
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
