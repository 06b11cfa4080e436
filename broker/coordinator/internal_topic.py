"""A coordinator's internal topic (``__consumer_offsets``, ``__transaction_state``): its creation, which of its
partitions this broker coordinates (loads on leadership, unloads on loss) and the replicated writes whose
cache updates apply in log order. The coordinators use it by composition and keep only their state machines.

Creation: on the first lookup, compacted, ``num_partitions`` partitions, the configured replication factor
capped at the live brokers (``min.insync.replicas`` capped likewise when given), then a short wait for the
asked partition's leader. Whichever broker asks first creates it; TOPIC_ALREADY_EXISTS is success.

Partitions: the replica manager calls ``on_leadership``; a partition this broker starts leading is loaded by
a task (``loading``; COORDINATOR_LOAD_IN_PROGRESS meanwhile) that calls the coordinator's ``load(p, partition)``
(which rebuilds its cache from the log and returns how many records it read), then marks the partition
``loaded`` with its leader epoch at load (the coordinator epoch) and calls ``loaded_hook(p)``. Losing the
leadership cancels a load, forgets the partition's unacknowledged writes and calls ``unload(p)``.

Lifecycle: ``start(tick, ...)`` runs the coordinator's timers (``tick``, every ``every_s``; a failure is
logged, the next tick runs); ``stop`` cancels them and the loads under way, and refuses coordination.

Writes (``append``): one record batch appended to the partition as leader with acks=all, acknowledged once
the high watermark passed it (at once with replication factor 1), or REQUEST_TIMED_OUT after
``offsets.commit.timeout.ms``; NOT_COORDINATOR when the leadership was lost meanwhile. ``on_commit`` (the cache
update) runs only for acknowledged writes, in the order of their records in the log, whatever order the
waiting requests resume in: the first waiter to see the high watermark move applies every acknowledged write
before it. A write that timed out or lost the leadership leaves the cache alone; if its record survives, the
next load of the partition applies it, as in Kafka. Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from broker.log import LogAppendError
from broker.replication.notifier import wait_any
from spark_kafkalog.protocol import ErrorCode

if TYPE_CHECKING:
    from broker.config import BrokerConfig
    from broker.config_admin.topic_admin import TopicAdmin
    from broker.metadata.cache import MetadataCache
    from broker.replication.partition import Partition, TopicPartition
    from broker.replication.replica_manager import ReplicaManager

log = logging.getLogger("kafkalog.coordinator")

CREATE_WAIT_S = 10.0


@dataclass
class _PendingWrite:
    """A write waiting for the high watermark; ``on_commit`` updates the coordinator's cache."""

    last_offset: int
    on_commit: Callable[[], object]
    abandoned: bool = False


class InternalTopic:
    """One internal topic of one broker's coordinator.

    ``replication_factor`` / ``min_isr`` / ``segment_bytes`` are the topic's configured values (the
    ``*.replication.factor``, ``*.min.isr``, ``*.segment.bytes`` broker configs), ``topic_configs`` the other
    topic configs it is created with (Kafka's, so that a cluster taken over by Kafka describes them alike);
    ``config`` gives ``offsets.commit.timeout.ms`` for ``append``, read at each write."""

    def __init__(
        self,
        name: str,
        num_partitions: int,
        *,
        replication_factor: int,
        segment_bytes: int,
        min_isr: int | None = None,
        topic_configs: Mapping[str, str] | None = None,
        config: BrokerConfig,
        metadata: MetadataCache,
        replica_manager: ReplicaManager,
        topic_admin: TopicAdmin,
        load: Callable[[int, Partition], Awaitable[int]],
        unload: Callable[[int], None],
        loaded_hook: Callable[[int], None] | None = None,
    ) -> None:
        self.name = name
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.segment_bytes = segment_bytes
        self.min_isr = min_isr
        self.topic_configs = dict(topic_configs or {})
        self.config = config
        self.metadata = metadata
        self.replica_manager = replica_manager
        self.topic_admin = topic_admin
        self._load_fn = load
        self._unload_fn = unload
        self._loaded_hook = loaded_hook
        self.loaded: dict[int, int] = {}
        """Partitions coordinated here -> their leader epoch when loaded (the coordinator epoch)."""
        self.loading: dict[int, asyncio.Task] = {}
        self.stopped = False
        self._pending: dict[int, deque[_PendingWrite]] = {}
        """Per partition, its writes not yet acknowledged, in log order."""
        self._create_lock = asyncio.Lock()
        self._ticker: asyncio.Task | None = None
        replica_manager.leadership_listeners.append(self.on_leadership)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, tick: Callable[[], Awaitable[object]], every_s: float, name: str) -> None:
        """Run ``tick`` every ``every_s`` seconds (a task named ``name``) until ``stop``."""
        self._ticker = asyncio.get_running_loop().create_task(self._tick_forever(tick, every_s), name=name)

    async def _tick_forever(self, tick: Callable[[], Awaitable[object]], every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the coordinator tick of %s failed", self.name)

    async def stop(self) -> None:
        """Refuse coordination from now on; cancel the timers and the loads under way. Idempotent."""
        self.stopped = True
        tasks = [t for t in [self._ticker, *self.loading.values()] if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- coordination ------------------------------------------------------------------------------
    def coordinator_error(self, p: int) -> ErrorCode:
        """NONE when this broker coordinates partition ``p`` now, else the error to answer."""
        if self.stopped:
            return ErrorCode.NOT_COORDINATOR
        if p in self.loading:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if p in self.loaded:
            return ErrorCode.NONE
        if self.name not in self.metadata.topics:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        return ErrorCode.NOT_COORDINATOR

    async def find_leader(self, p: int, create_wait_s: float = CREATE_WAIT_S) -> tuple[ErrorCode, int]:
        """(error, the live leader of partition ``p``); creates the topic when missing (waiting up to
        ``create_wait_s`` for ``p``'s leader). Once the topic exists the answer is immediate:
        COORDINATOR_NOT_AVAILABLE (retriable) while ``p`` has no live leader. Other partitions are not waited
        for: a stopped broker leaves its partitions leaderless, and that must not hold the lookups of keys
        coordinated elsewhere."""
        if self.name not in self.metadata.topics:
            await self.ensure_created(p, create_wait_s)
        topic = self.metadata.topics.get(self.name)
        if topic is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1
        leader = topic.leader(p)
        if leader < 0 or leader not in self.metadata.brokers:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1
        return ErrorCode.NONE, leader

    async def ensure_created(self, p: int, wait_s: float = CREATE_WAIT_S) -> None:
        """Create the topic (once, whichever broker asks first) and wait up to ``wait_s`` for ``p``'s leader."""
        from broker.config_admin.topic_admin import TopicAdminError

        async with self._create_lock:
            if self.name not in self.metadata.topics:
                rf = self.replication_factor
                live = len(self.metadata.brokers)
                if 0 < live < rf:
                    log.warning(
                        "creating %s with replication factor %d: its configured replication factor is %d but only "
                        "%d brokers are alive",
                        self.name,
                        live,
                        rf,
                        live,
                    )
                    rf = live
                configs = {"cleanup.policy": "compact"}
                if self.min_isr is not None:
                    configs["min.insync.replicas"] = str(min(self.min_isr, rf))
                configs["segment.bytes"] = str(self.segment_bytes)
                configs.update(self.topic_configs)
                try:
                    await self.topic_admin.create_topic(self.name, self.num_partitions, rf, configs)
                    log.info("created %s with %d partitions", self.name, self.num_partitions)
                except TopicAdminError as e:
                    if e.error_code != ErrorCode.TOPIC_ALREADY_EXISTS:
                        log.warning("could not create %s: %s", self.name, e)
                        return

        def has_leader() -> bool:
            topic = self.metadata.topics.get(self.name)
            return topic is not None and topic.leader(p) >= 0

        await self.topic_admin.wait_for(has_leader, wait_s)

    def on_leadership(self, tp: TopicPartition, is_leader: bool) -> None:
        """Replica-manager hook: this broker started (True) or stopped (False) leading ``tp``."""
        if tp.topic != self.name or self.stopped:
            return
        p = tp.partition
        if is_leader:
            if p not in self.loaded and p not in self.loading:
                self.loading[p] = asyncio.get_running_loop().create_task(self._load(p), name=f"load-{self.name}-{p}")
            return
        task = self.loading.pop(p, None)
        if task is not None:
            task.cancel()
        self.loaded.pop(p, None)
        self._pending.pop(p, None)
        self._unload_fn(p)
        log.info("%s-%d: no longer its leader, its keys are coordinated elsewhere", self.name, p)

    async def _load(self, p: int) -> None:
        try:
            part = self.replica_manager.get_partition(self.name, p)
            if part is None:
                return
            epoch = part.leader_epoch
            count = await self._load_fn(p, part)
            self.loaded[p] = epoch
            if count:
                log.info("%s-%d: loaded %d records", self.name, p, count)
            if self._loaded_hook is not None:
                self._loaded_hook(p)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s-%d: loading failed", self.name, p)
        finally:
            self.loading.pop(p, None)

    # -- writes ----------------------------------------------------------------------------------------
    async def append(self, p: int, batch: bytearray, on_commit: Callable[[], object], what: str = "") -> ErrorCode:
        """Append ``batch`` to partition ``p``, wait until acknowledged as acks=all requires (the high watermark
        passed it), then run ``on_commit`` (with the acknowledged writes before it, in log order). NONE, or
        the error for the coordinator's client (``append_error``; REQUEST_TIMED_OUT, NOT_COORDINATOR).
        ``what`` names the write in the log."""
        part, _ = self.replica_manager.leader_partition(self.name, p)
        if part is None or p not in self.loaded:
            return ErrorCode.NOT_COORDINATOR
        epoch = part.leader_epoch
        try:
            info = part.append_as_leader(batch, required_acks=-1)
        except LogAppendError as e:
            log.warning("%sappending to %s-%d failed: %s", f"{what}: " if what else "", self.name, p, e)
            return append_error(e.error_code)
        write = _PendingWrite(info.last_offset, on_commit)
        self._pending.setdefault(p, deque()).append(write)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config["offsets.commit.timeout.ms"] / 1000
        while part.is_leader and part.leader_epoch == epoch and part.high_watermark <= info.last_offset:
            remaining = deadline - loop.time()
            if remaining <= 0:
                write.abandoned = True
                return ErrorCode.REQUEST_TIMED_OUT
            await wait_any([part.data_notifier], remaining)
        if not (part.is_leader and part.leader_epoch == epoch and p in self.loaded):
            write.abandoned = True
            return ErrorCode.NOT_COORDINATOR
        self._apply_acknowledged(p, part.high_watermark)
        return ErrorCode.NONE

    def _apply_acknowledged(self, p: int, high_watermark: int) -> None:
        pending = self._pending.get(p)
        while pending and pending[0].last_offset < high_watermark:
            write = pending.popleft()
            if not write.abandoned:
                write.on_commit()


def append_error(code: int) -> ErrorCode:
    """Kafka's mapping of append errors to what a coordinator's client understands."""
    if code in (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.REQUEST_TIMED_OUT):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return ErrorCode.NOT_COORDINATOR
    if code in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    if code in (ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_TXN_STATE):
        return ErrorCode(code)  # a transactional commit of a fenced producer
    return ErrorCode.UNKNOWN_SERVER_ERROR
