"""The partitions this broker hosts, kept in line with the cluster's assignments and partition states.

``apply_topic`` is called (on the event loop) whenever the registry reports a topic's assignment or
partition states: for every partition that lists this broker as a replica a log is opened or created
(with the topic's configuration) and takes the role in the state; partitions no longer assigned here
are dropped and their logs deleted. ``remove_topic`` deletes every local log of a deleted topic.

A partition this broker follows is handed to the ``FetcherManager`` (one ``ReplicaFetcher`` per leader;
a new leader epoch starts again with truncation); one it leads or that has no leader is taken from it.

ISR (leader side, Kafka's ZooKeeper-era ``Partition.maybeShrinkIsr``/``maybeExpandIsr``): a task checks
every ``replica.lag.time.max.ms / 2`` for ISR followers not caught up within ``replica.lag.time.max.ms``;
a follower Fetch that reaches the high watermark adds its broker back. The new ISR is written to the
partition state node with compare-and-set on the node version (same leader, leader epoch and controller
epoch), then applied locally; a failed write (the controller changed the state) is dropped, the watch
brings the new state. One ISR write per partition at a time; a state delivered by the watch that is older
than the version this broker wrote is ignored.

Figures for ``broker.metrics``: ``replica_figures`` (size, offsets and role of every local replica); the
ISR shrink and expand counters are recorded in the ``BrokerMetrics`` given to the constructor.

Lookups for request handlers follow Kafka's rules: a partition unknown to the cluster is
UNKNOWN_TOPIC_OR_PARTITION; one that exists but is not led here is NOT_LEADER_OR_FOLLOWER.

Concurrency: event-loop only; registry writes run through ``run_blocking``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from broker.cluster.registry import PartitionState, RegistryError, StaleStateError
from broker.metrics import ReplicaFigures
from spark_kafkalog.protocol import ErrorCode

from .fetcher import FetcherManager
from .partition import Partition, TopicPartition
from .replica_selector import selector_for

if TYPE_CHECKING:
    from broker.cluster.registry import ClusterRegistry
    from broker.log import LogConfig, LogManager
    from broker.metadata.cache import MetadataCache
    from broker.metrics import BrokerMetrics

log = logging.getLogger("kafkalog.replication")


class ReplicaManager:
    def __init__(
        self,
        broker_id: int,
        log_manager: LogManager,
        metadata: MetadataCache,
        *,
        metrics: BrokerMetrics,
        config: Any = None,
        registry: ClusterRegistry | None = None,
        run_blocking: Callable[..., Awaitable[Any]] | None = None,
    ) -> None:
        from broker.config import BrokerConfig

        self.broker_id = broker_id
        self.log_manager = log_manager
        self.metadata = metadata
        self.config = config if config is not None else BrokerConfig.from_properties({"broker.id": str(broker_id)})
        self.registry = registry
        self.run_blocking = run_blocking
        self.max_lag_ms = self.config["replica.lag.time.max.ms"]
        self.replica_selector = selector_for(self.config["replica.selector.class"])
        """``replica.selector.class``: names consumers' preferred read replicas as leader (KIP-392); None: never."""
        self.fetchers: FetcherManager | None = None
        self._isr_task: asyncio.Task | None = None
        self._isr_writes: set[asyncio.Task] = set()
        self.partitions: dict[TopicPartition, Partition] = {}
        self.metrics = metrics
        """Where the ISR shrinks and expansions this broker makes as leader are counted."""
        self.leadership_listeners: list[Callable[[TopicPartition, bool], None]] = []
        """Called with (partition, is leader now) when this broker starts or stops leading a partition
        (the group coordinator loads and unloads ``__consumer_offsets`` partitions from it)."""

    @staticmethod
    def now_ms() -> int:
        """The clock of follower fetch and caught-up times (monotonic)."""
        return int(time.monotonic() * 1000)

    def start(self) -> None:
        """Start the ISR expiration task and the fetcher manager (on the broker's event loop)."""
        self.fetchers = FetcherManager(self.broker_id, self.metadata, self.config, self.now_ms)
        for part in self.partitions.values():
            self._follow_or_not(part)
        self._isr_task = asyncio.get_running_loop().create_task(self._expire_isr(), name="isr-expiration")

    async def stop_following(self) -> None:
        """Stop the replica fetchers (Kafka's StopReplica for a stopping broker): this broker follows
        nothing from now on, so no leader adds it back to an ISR its controlled shutdown took it out of."""
        if self.fetchers is not None:
            await self.fetchers.stop()

    async def stop(self) -> None:
        """Stop the ISR task, the fetchers and the ISR writes, then wake every waiting long poll and acks=all
        produce, so they answer now instead of at their timeout."""
        if self._isr_task is not None:
            self._isr_task.cancel()
            await asyncio.gather(self._isr_task, return_exceptions=True)
            self._isr_task = None
        fetchers, self.fetchers = self.fetchers, None  # first: states applied meanwhile start no fetcher
        if fetchers is not None:
            await fetchers.stop()
        if self._isr_writes:
            await asyncio.gather(*self._isr_writes, return_exceptions=True)
        for part in self.partitions.values():
            part.data_notifier.notify()
            part.append_notifier.notify()

    def apply_topic(
        self,
        topic: str,
        replicas: dict[int, tuple[int, ...]],
        states: dict[int, PartitionState],
        config: LogConfig,
    ) -> None:
        for p, reps in replicas.items():
            tp = TopicPartition(topic, p)
            part = self.partitions.get(tp)
            if self.broker_id not in reps:
                if part is not None:
                    self._drop(tp, delete=True)
                continue
            if part is None:
                plog = self.log_manager.get_or_create_log(topic, p, config)
                part = self.partitions[tp] = Partition(tp, self.broker_id, plog)
            elif part.log.config != config:
                self.log_manager.update_topic_config(topic, config)
            state = states.get(p)
            if state is None or 0 <= state.zk_version < part.zk_version:
                continue  # no state yet, or older than the ISR this leader wrote
            if (state.leader_epoch, state.leader, tuple(state.isr), tuple(reps)) != (
                part.leader_epoch,
                part.leader_id,
                part.isr,
                part.replicas,
            ):
                was_leader, old_epoch, old_leader = part.is_leader, part.leader_epoch, part.leader_id
                part.apply_state(state, tuple(reps), self.now_ms())
                if part.is_leader != was_leader:
                    self._leadership_changed(tp, part.is_leader)
                if (old_epoch, old_leader) != (part.leader_epoch, part.leader_id):
                    self._follow_or_not(part)
                log.info("%s: leader %d epoch %d isr %s", tp, state.leader, state.leader_epoch, list(state.isr))
            else:
                part.zk_version = max(part.zk_version, state.zk_version)
                part.controller_epoch = state.controller_epoch
        for tp in [tp for tp in self.partitions if tp.topic == topic and tp.partition not in replicas]:
            self._drop(tp, delete=True)

    def remove_topic(self, topic: str) -> None:
        for tp in [tp for tp in self.partitions if tp.topic == topic]:
            self._drop(tp, delete=True)

    def delete_stray_logs(self, known_topics: set[str]) -> list[str]:
        """Delete local logs of topics that no longer exist (deleted while this broker was down)."""
        removed = []
        for plog in list(self.log_manager.all_logs()):
            if plog.topic not in known_topics:
                self.log_manager.delete_log(plog.topic, plog.partition)
                removed.append(f"{plog.topic}-{plog.partition}")
        if removed:
            log.info("deleted logs of topics that no longer exist: %s", ", ".join(sorted(removed)))
        return removed

    def _drop(self, tp: TopicPartition, *, delete: bool) -> None:
        part = self.partitions.pop(tp, None)
        if part is None:
            return
        was_leader = part.is_leader
        if self.fetchers is not None:
            self.fetchers.remove(tp)
        part.leader_id = -1
        part.data_notifier.notify()
        part.append_notifier.notify()
        if was_leader:
            self._leadership_changed(tp, False)
        if delete:
            self.log_manager.delete_log(tp.topic, tp.partition)

    def _follow_or_not(self, part: Partition) -> None:
        if self.fetchers is None:
            return
        if part.is_follower:
            self.fetchers.add(part)
        else:
            self.fetchers.remove(part.tp)

    # -- ISR ------------------------------------------------------------------------------------
    async def _expire_isr(self) -> None:
        interval = max(self.max_lag_ms / 2000, 0.01)
        while True:
            await asyncio.sleep(interval)
            now = self.now_ms()
            for part in list(self.partitions.values()):
                try:
                    out = part.out_of_sync_replicas(now, self.max_lag_ms)
                    if out and not part.isr_update_pending:
                        log.info("%s: shrinking ISR: replicas %s are out of sync", part.tp, out)
                        self._write_isr(part, tuple(r for r in part.isr if r not in out))
                except Exception:  # one partition's failure must not end the checks of all the others
                    log.exception("%s: ISR expiration check failed", part.tp)

    def maybe_expand_isr(self, part: Partition, replica_id: int) -> None:
        """Add follower ``replica_id`` to the ISR when its Fetch (just recorded) shows it caught up."""
        if part.isr_update_pending or not part.is_catching_up(replica_id):
            return
        log.info("%s: expanding ISR: replica %d caught up", part.tp, replica_id)
        self._write_isr(part, tuple(r for r in part.replicas if r in part.isr or r == replica_id))

    def _write_isr(self, part: Partition, isr: tuple[int, ...]) -> None:
        registry, run_blocking = self.registry, self.run_blocking
        if registry is None or run_blocking is None:
            part.set_isr(isr, part.zk_version)  # no registry (tests of the pure replica manager)
            return
        part.isr_update_pending = True
        task = asyncio.get_running_loop().create_task(self._cas_isr(part, isr, registry, run_blocking))
        self._isr_writes.add(task)
        task.add_done_callback(self._isr_writes.discard)

    async def _cas_isr(
        self,
        part: Partition,
        isr: tuple[int, ...],
        registry: ClusterRegistry,
        run_blocking: Callable[..., Awaitable[Any]],
    ) -> None:
        tp, epoch = part.tp, part.leader_epoch
        new = PartitionState(part.leader_id, epoch, isr, part.controller_epoch, part.zk_version)
        try:
            written = await run_blocking(registry.update_partition_state, tp.topic, tp.partition, new)
        except StaleStateError as e:
            log.info("%s: ISR change to %s lost to a newer partition state: %s", tp, list(isr), e)
            return
        except RegistryError as e:
            log.warning("%s: writing ISR %s failed: %s", tp, list(isr), e)
            return
        finally:
            part.isr_update_pending = False
        if self.partitions.get(tp) is part and part.is_leader and part.leader_epoch == epoch:
            self.metrics.isr_changed(expanded=len(isr) > len(part.isr))
            part.set_isr(isr, written.zk_version)
            log.info("%s: ISR now %s (state version %d)", tp, list(isr), written.zk_version)

    def _leadership_changed(self, tp: TopicPartition, is_leader: bool) -> None:
        for listener in self.leadership_listeners:
            try:
                listener(tp, is_leader)
            except Exception:
                log.exception("%s: a leadership listener failed", tp)

    # -- figures for broker.metrics -------------------------------------------------------------
    def replica_figures(self) -> list[ReplicaFigures]:
        """Size, segments, offsets and role of every local replica; under-replicated: led here with an ISR
        smaller than its replicas."""
        out = []
        for tp, part in list(self.partitions.items()):
            plog = part.log
            out.append(
                ReplicaFigures(
                    tp.topic,
                    tp.partition,
                    plog.size_in_bytes,
                    len(plog.segments),
                    plog.log_start_offset,
                    plog.log_end_offset,
                    plog.high_watermark,
                    part.is_leader,
                    part.is_leader and len(part.isr) < len(part.replicas),
                )
            )
        return out

    # -- lookups for handlers -------------------------------------------------------------------
    def get_partition(self, topic: str, partition: int) -> Partition | None:
        return self.partitions.get(TopicPartition(topic, partition))

    def partition_to_read(
        self, topic: str, partition: int, *, from_follower: bool, version: int
    ) -> tuple[Partition | None, ErrorCode]:
        """The local replica that may answer a Fetch of ``topic``-``partition``: the leader, or for a consumer's
        Fetch v11+ also an in-sync follower (KIP-392, ``follower_fetch.partition_to_read``)."""
        from .follower_fetch import partition_to_read

        return partition_to_read(self, topic, partition, from_follower=from_follower, version=version)

    def leader_partition(self, topic: str, partition: int) -> tuple[Partition | None, ErrorCode]:
        part = self.partitions.get(TopicPartition(topic, partition))
        if part is not None and part.is_leader:
            return part, ErrorCode.NONE
        t = self.metadata.topics.get(topic)
        if t is None or partition not in t.replicas:
            return None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return None, ErrorCode.NOT_LEADER_OR_FOLLOWER
