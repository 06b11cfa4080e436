"""``GroupConsumerBase``: the state and the shared steps of the ``GroupCoordinator``'s KIP-848 consumer groups
(the base of ``group_consumer_classic.GroupConsumerClassic`` and ``group_consumer_protocol.GroupConsumerProtocol``).

It holds the consumer groups (``consumer_groups``, one ``consumer.group.ConsumerGroup`` each), their per-group
locks (``_lock``, ``_locked_consumer_group``: a group's requests run one at a time, so its records stay in log
order), the consumer group config (``group.coordinator.rebalance.protocols``, ``group.consumer.*``: ``_init_consumer_protocol`` validates it,
``_setting`` reads it), each member's per-partition assignment epochs (KIP-1251, ``_track_assignment_epochs``)
and the writing helpers: ``records_batch`` (one record batch of key/value pairs), ``write_error`` (Kafka's
mapping of a failed append: NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE;
NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR; others UNKNOWN_SERVER_ERROR) and ``_delete_consumer_group_records``.
Event-loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable, Collection
from typing import TYPE_CHECKING, Any

from broker.config_keys import KEYS_BY_NAME
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.batch_builder import RecordBatchBuilder

from .consumer.assignors import assignors_from_config
from .consumer.group import ConsumerGroup
from .consumer.record_codec import encode_record
from .group import GroupError
from .group_consumer_topics import MetadataTopicsView, TopicsVersion
from .group_coordinator_base import GroupCoordinatorBase
from .offsets_topic import encode_offset_key

if TYPE_CHECKING:
    from broker.metadata.cache import MetadataCache

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


def nothing() -> None:
    """The ``committed`` callback of a write with nothing to apply once it is acknowledged."""
    return None


def records_batch(pairs: list[tuple[bytes, bytes | None]], now_ms: int) -> bytearray:
    """One record batch of the (key, value) pairs (value None: a tombstone), all timestamped ``now_ms``."""
    b = RecordBatchBuilder()
    for key, value in pairs:
        b.append(now_ms, key, value)
    return bytearray(b.build())


class GroupConsumerBase(GroupCoordinatorBase):
    """The consumer groups' state and shared steps (a part of the ``GroupCoordinator``; see the module docstring)."""

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

    def topics_view(self, describable: Callable[[str], bool] | None = None) -> MetadataTopicsView:
        return MetadataTopicsView(self.metadata, self._topics_version.current(self.metadata), describable)

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

    def _lock(self, group_id: str) -> asyncio.Lock:
        lock = self._cg_locks.get(group_id)
        if lock is None:
            lock = self._cg_locks[group_id] = asyncio.Lock()
        return lock

    @contextlib.asynccontextmanager
    async def _locked_consumer_group(self, group_id: str) -> AsyncIterator[ConsumerGroup | None]:
        """The consumer group ``group_id`` under its lock, as it is once the lock is held (it may have gone
        meanwhile); None at once, without locking, when ``group_id`` is no consumer group now."""
        if group_id not in self.consumer_groups:
            yield None
            return
        async with self._lock(group_id):
            yield self.consumer_groups.get(group_id)

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

        code = await self._append(group_id, records_batch(pairs, now), committed)
        if code != ErrorCode.NONE:
            raise GroupError(write_error(code), f"deleting group {group_id} failed: {code.name}")

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


__all__ = ["CLASSIC", "CONSUMER", "GroupConsumerBase", "nothing", "records_batch", "write_error"]
