"""``SharePartitionManager``: the share partitions (KIP-932) of the partitions this broker leads, and their sessions.

One ``SharePartition`` per (group id, topic id, partition), created on first use while this broker leads the
partition (else NOT_LEADER_OR_FOLLOWER; UNKNOWN_TOPIC_OR_PARTITION for a partition the cluster does not
have) and dropped when it stops leading it or starts a new leader epoch. Its state is loaded with the share
persister's ``read`` (``share_load``; a start offset of -1 is resolved by the group's
``share.auto.offset.reset`` and written back). Every acknowledgement, release or lock expiry that changed the
state is written with the persister's ``write`` before the request that caused it is answered; a write that
fails drops the share partition, so the next use loads the last persisted state again (Kafka's rollback).

Fetching (``acquire``) reads the log from the partition's next fetch offset, below the high watermark or, for
``share.isolation.level=read_committed``, the last stable offset (``share_log``: batch headers only); the
acquired offsets' whole batches are returned. A read_committed group archives the batches of aborted
transactions at once (they are acquired and rejected). Long polls wait on ``notifier(topic, partition)``,
which fires when records become available again (release, lock expiry, a new start offset) as well as on
the partition's ``data_notifier`` (new data).

Group settings: ``group_configs().share_config(group)`` (``broker.config_admin.group_configs``, looked at on every
use: a changed lock duration, delivery count limit or isolation level applies from then on) when the broker has
it, else the broker defaults ``group.share.record.lock.duration.ms``, ``group.share.delivery.count.limit``
and ``share.auto.offset.reset`` latest / read_uncommitted; the ``share.auto.offset.reset`` that resolves a start
offset of -1 is read from the registry (``group_configs().read_share_config(group)``, ``share_load``), which an
alter answered on any broker has reached. ``group.share.partition.max.record.locks`` bounds the in-flight records
of a share partition.

The lock-expiry task sleeps until the earliest acquisition lock deadline (woken by an acquisition whose lock ends
before that).

Concurrency: event loop only; an ``asyncio.Lock`` per share partition serialises its load, acquire,
acknowledge and write (a persister call is awaited while holding it). ``clock`` is monotonic seconds (the
share partitions' lock deadlines), ``wall_ms`` epoch milliseconds (``by_duration`` resets).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from broker.replication.notifier import Notifier
from broker.replication.partition import TopicPartition
from spark_kafkalog.protocol import ErrorCode

from .share_fetch_read import PartitionFetch, acquire_from_log
from .share_load import GroupSettings, group_settings, load_share_partition
from .share_session import ShareSessionCache

log = logging.getLogger("kafkalog.share")

__all__ = ["PartitionFetch", "SharePartitionManager"]

_MIN_TIMER_S = 0.005
_LOOKUPS = 3
Key = tuple[str, uuid.UUID, int]
"""(group id, topic id, partition)."""


class _Held(NamedTuple):
    entry: _Entry | None
    part: Any
    error: ErrorCode
    message: str | None


@dataclass
class _Entry:
    topic: str
    leader_epoch: int
    settings: GroupSettings
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    sp: Any = None
    """The ``SharePartition`` (None until loaded)."""


class SharePartitionManager:
    def __init__(
        self,
        config: Any,
        metadata: Any,
        replica_manager: Any,
        *,
        persister: Callable[[], Any],
        group_configs: Callable[[], Any] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        partition_factory: Callable[..., Any] | None = None,
    ) -> None:
        self.config = config
        self.metadata = metadata
        self.replica_manager = replica_manager
        self.persister_of = persister
        """Where the share persister is found (the broker's ``services.share_persister``, resolved on use)."""
        self._group_configs = group_configs
        self.clock = clock
        self.wall_ms = wall_ms
        self._factory = partition_factory
        self.sessions = ShareSessionCache(config["group.share.max.share.sessions"])
        self._entries: dict[Key, _Entry] = {}
        self._notifiers: dict[TopicPartition, Notifier] = {}
        self._wake = asyncio.Event()
        self._timer_at: float | None = None
        """When the lock-expiry timer fires next (None: it sleeps until woken)."""
        self._task: asyncio.Task | None = None
        self._watched_connections: set[int] = set()
        self._background: set[asyncio.Task] = set()

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Follow leadership changes and start the lock-expiry task (on the broker's event loop)."""
        self.replica_manager.leadership_listeners.append(self._leadership_changed)
        self._task = asyncio.get_running_loop().create_task(self._expire_loop(), name="share-lock-expiry")

    async def stop(self) -> None:
        if self._leadership_changed in self.replica_manager.leadership_listeners:
            self.replica_manager.leadership_listeners.remove(self._leadership_changed)
        tasks = [t for t in (self._task, *self._background) if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._task = None
        for n in self._notifiers.values():
            n.notify()

    # -- lookups --------------------------------------------------------------------------------------------
    def settings(self, group_id: str) -> GroupSettings:
        return group_settings(self.config, self._group_configs(), group_id)

    def notifier(self, topic: str, partition: int) -> Notifier:
        """Fires when records of ``topic``-``partition`` may have become available again."""
        tp = TopicPartition(topic, partition)
        n = self._notifiers.get(tp)
        if n is None:
            n = self._notifiers[tp] = Notifier()
        return n

    def loaded(self, group_id: str, topic_id: uuid.UUID, partition: int) -> Any:
        """The loaded ``SharePartition`` of the key, or None (tests, describe)."""
        e = self._entries.get((group_id, topic_id, partition))
        return None if e is None else e.sp

    @contextlib.asynccontextmanager
    async def _locked(self, group_id: str, topic: str, topic_id: uuid.UUID, p: int) -> AsyncIterator[_Held]:
        """The key's share partition (loaded on first use) with its lock held, or the error that stops it: the
        partition not led here, a failed load. An entry dropped while waiting for its lock (failed write,
        leadership moved) is looked up again."""
        key = (group_id, topic_id, p)
        for _ in range(_LOOKUPS):
            part, code = self.replica_manager.leader_partition(topic, p)
            if part is None:
                yield _Held(None, None, code, None)
                return
            entry = self._entries.get(key)
            if entry is None or entry.leader_epoch != part.leader_epoch:
                if entry is not None:
                    entry.sp = None  # a new leader epoch: whatever the old one held is gone
                entry = self._entries[key] = _Entry(topic, part.leader_epoch, self.settings(group_id))
            async with entry.lock:
                if self._entries.get(key) is not entry:
                    continue
                if entry.sp is None:
                    sp, code, msg = await load_share_partition(
                        self.persister_of(),
                        group_id,
                        topic_id,
                        p,
                        part,
                        entry.settings,
                        self.config,
                        clock=self.clock,
                        wall_ms=self.wall_ms,
                        factory=self._factory,
                        group_configs=self._group_configs(),
                    )
                    if sp is None:
                        if self._entries.get(key) is entry:
                            del self._entries[key]
                        yield _Held(None, part, code, msg)
                        return
                    entry.sp = sp
                self._refresh(entry, group_id)
                yield _Held(entry, part, ErrorCode.NONE, None)
                return
        yield _Held(None, None, ErrorCode.COORDINATOR_NOT_AVAILABLE, "the share partition is being reloaded")

    def _refresh(self, entry: _Entry, group_id: str) -> None:
        """Follow the group's config: a changed lock duration or delivery count limit applies from now on (to
        new acquisitions and releases), a changed isolation level to the next read."""
        settings = self.settings(group_id)
        if settings == entry.settings:
            return
        entry.settings = settings
        entry.sp.lock_duration_ms = settings.record_lock_duration_ms
        entry.sp.delivery_count_limit = settings.delivery_count_limit

    # -- operations -----------------------------------------------------------------------------------------
    async def acquire(
        self,
        group_id: str,
        member_id: str,
        topic: str,
        topic_id: uuid.UUID,
        p: int,
        *,
        max_records: int,
        max_bytes: int,
        min_one_batch: bool,
        record_limit: bool = False,
    ) -> PartitionFetch:
        """Acquire records of the partition for ``member_id`` (see the module docstring)."""
        async with self._locked(group_id, topic, topic_id, p) as held:
            if held.entry is None:
                return PartitionFetch(held.error, held.message)
            entry = held.entry
            result, changed = acquire_from_log(
                entry.sp,
                held.part.log,
                member_id,
                max_records=max_records,
                max_bytes=max_bytes,
                min_one_batch=min_one_batch,
                record_limit=record_limit,
                read_committed=entry.settings.read_committed,
            )
            if changed:
                code, msg = await self._write(group_id, topic_id, p, entry, held.part)
                if code != ErrorCode.NONE:
                    return PartitionFetch(code, msg)
        if result.acquired:
            deadline = self.clock() + held.entry.settings.record_lock_duration_ms / 1000
            if self._timer_at is None or deadline < self._timer_at:
                self._wake.set()  # the timer sleeps past this lock: set it again
        return result

    async def acknowledge(
        self, group_id: str, member_id: str, topic: str, topic_id: uuid.UUID, p: int, batches: list[Any]
    ) -> tuple[ErrorCode, str | None]:
        """Apply ``batches`` (``AckBatch``) of ``member_id``; written before returning. All or nothing."""
        async with self._locked(group_id, topic, topic_id, p) as held:
            if held.entry is None:
                return held.error, held.message
            code, msg = held.entry.sp.acknowledge(member_id, batches)
            if code != ErrorCode.NONE:
                return code, msg
            code, msg = await self._write(group_id, topic_id, p, held.entry, held.part)
        self.notifier(topic, p).notify()
        return code, msg

    async def release_member(self, group_id: str, member_id: str, partitions: Iterable[tuple[uuid.UUID, int]]) -> None:
        """Release what ``member_id`` holds in the loaded share partitions of ``partitions`` (its session closed)."""
        for topic_id, p in partitions:
            entry = self._entries.get((group_id, topic_id, p))
            if entry is None or entry.sp is None:
                continue
            part, code = self.replica_manager.leader_partition(entry.topic, p)
            if part is None:
                continue
            async with entry.lock:
                if entry.sp is not None and entry.sp.release_member(member_id):
                    await self._write(group_id, topic_id, p, entry, part)
            self.notifier(entry.topic, p).notify()

    async def close_session(self, group_id: str, member_id: str) -> None:
        session = self.sessions.remove(group_id, member_id)
        if session is not None:
            await self.release_member(group_id, member_id, list(session.partitions))

    def watch_connection(self, connection_id: int, disconnected: Any) -> None:
        """Close the share sessions last used over this connection when it goes (Kafka 4.1's rule)."""
        if disconnected is None or connection_id in self._watched_connections:
            return
        self._watched_connections.add(connection_id)

        def gone(_f: Any) -> None:
            self._watched_connections.discard(connection_id)
            for s in self.sessions.remove_connection(connection_id):
                self._spawn(self.release_member(s.group_id, s.member_id, list(s.partitions)))

        disconnected.add_done_callback(gone)

    async def expire_locks(self) -> None:
        """Expire the acquisition locks past their deadline, writing the share partitions that changed."""
        for key, entry in list(self._entries.items()):
            if entry.sp is None or entry.sp.next_lock_deadline() is None:
                continue
            part, _ = self.replica_manager.leader_partition(entry.topic, key[2])
            if part is None:
                continue
            async with entry.lock:
                if entry.sp is None or not entry.sp.expire_locks():
                    continue
                await self._write(key[0], key[1], key[2], entry, part)
            self.notifier(entry.topic, key[2]).notify()

    # -- internals ------------------------------------------------------------------------------------------
    async def _write(
        self, group_id: str, topic_id: uuid.UUID, p: int, entry: _Entry, part: Any
    ) -> tuple[ErrorCode, str | None]:
        """Persist the entry's state (lock held); a failed write drops the share partition (reloaded on next use)."""
        state = entry.sp.persisted_state()
        try:
            code, msg = await self.persister_of().write(
                group_id, topic_id, p, state.state_epoch, part.leader_epoch, state.start_offset, state.state_batches
            )
        except Exception as e:  # noqa: BLE001 - a persister failure is answered, never raised into a handler
            log.exception("share state write of %s %s-%d failed", group_id, entry.topic, p)
            code, msg = ErrorCode.UNKNOWN_SERVER_ERROR, str(e)
        if code != ErrorCode.NONE:
            log.warning("share state write of %s %s-%d: %s (%s); reloading", group_id, entry.topic, p, code.name, msg)
            entry.sp = None
            if self._entries.get((group_id, topic_id, p)) is entry:
                del self._entries[(group_id, topic_id, p)]
            if code == ErrorCode.FENCED_LEADER_EPOCH:
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        return code, msg

    def _leadership_changed(self, tp: TopicPartition, is_leader: bool) -> None:
        if is_leader:
            return
        for key in [k for k, e in self._entries.items() if e.topic == tp.topic and k[2] == tp.partition]:
            self._entries.pop(key).sp = None
        n = self._notifiers.get(tp)
        if n is not None:
            n.notify()

    async def _expire_loop(self) -> None:
        while True:
            deadlines = [
                d
                for e in self._entries.values()
                if e.sp is not None
                for d in (e.sp.next_lock_deadline(),)
                if d is not None
            ]
            self._timer_at = min(deadlines) if deadlines else None
            timeout = None if self._timer_at is None else max(self._timer_at - self.clock(), _MIN_TIMER_S)
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass
            try:
                await self.expire_locks()
            except Exception:  # noqa: BLE001 - the timer keeps running
                log.exception("share lock expiry failed")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
