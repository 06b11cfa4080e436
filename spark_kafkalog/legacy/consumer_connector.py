"""``ConsumerConnector``: Kafka 0.8's ZooKeeper-coordinated high-level consumer (design sections 5.1 and 5.6).

Registration (``create_message_streams`` / ``create_message_streams_by_filter``, once per connector):

1. create the ephemeral ``/consumers/<group>/ids/<consumer_id>`` with the subscription JSON;
2. watch the children of ``/consumers/<group>/ids`` (a consumer joins or leaves);
3. watch the children of ``/brokers/ids`` (a broker joins or leaves);
4. with a topic filter, watch the children of ``/brokers/topics`` (a rebalance only when the set of allowed
   topics changed); every subscribed topic's ``/brokers/topics/<topic>`` node is watched too (created, or
   its partitions changed);
5. rebalance, in the caller's thread; ``ConsumerRebalanceFailedException`` when every attempt failed.

Rebalance (at most ``rebalance.max.retries`` attempts, ``rebalance.backoff.ms`` apart, on a connector thread
for watch events): stop the fetcher; mark the owned partitions revoked and drop their queued chunks; commit
their consumed offsets (with ``auto.commit.enable``); delete this consumer's owner znodes; read the group's
consumers and their subscriptions, and each subscribed topic's partitions; assign with the range algorithm
(``range_rebalance``); create the ephemeral owner znodes (value: the thread id) - if one is still held by
another consumer the attempt fails, the znodes it created are deleted and the attempt is repeated after the
backoff, until the previous owner let go; read the offsets (after the claim, so the previous owner's last
commit is seen), reset missing ones per ``auto.offset.reset``, and start the fetcher. An expired ZooKeeper
session re-registers the ids znode and rebalances.

Consumer threads are ``<consumer_id>-<i>``, one per requested stream (per topic for ``create_message_streams``,
across all allowed topics for a filter); thread ``i``'s partitions go to stream ``i``.

Concurrency: watch events and the auto-commit timer run on connector threads; ``commit_offsets`` and
``shutdown`` may be called from any thread; each stream is iterated by one thread. ``shutdown()`` is
idempotent: it stops the fetcher, commits (with auto commit), releases ownership, deletes the ids znode,
ends every stream's iteration and closes the connections. Call it also after a failed
``create_message_streams``: until then the ZooKeeper session lives on (kazoo joins its threads at interpreter
exit, which waits for ZooKeeper when it is unreachable).

Security (issue 26): the connector bootstraps from the endpoints of ``/brokers/ids/<id>`` that match
``security.protocol`` (or ``listener.name``; ``broker_endpoints``), and its two Kafka clients use the
config's TLS/SASL settings with one shared ``ClientSecurity``. A broker without such an endpoint fails
``create_message_streams`` with ``BrokerEndPointNotAvailableException``; a wrong password with
``KafkaAuthenticationError``, an untrusted certificate with ``KafkaSslError``: with a secured protocol the
connector asks the brokers for metadata before it registers. The ZooKeeper session itself is not secured.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Mapping
from typing import Any

from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.legacy.connector_fetcher import ConnectorFetcher
from spark_kafkalog.legacy.connector_offsets import ConnectorOffsets
from spark_kafkalog.legacy.consumer_config import ConsumerConfig
from spark_kafkalog.legacy.kafka_stream import SHUTDOWN, KafkaStream, PartitionTopicInfo
from spark_kafkalog.legacy.range_rebalance import assign_for_consumer, consumer_thread_ids
from spark_kafkalog.legacy.topic_filter import TopicFilter, filter_from_registration
from spark_kafkalog.legacy.zk_consumer_registry import (
    BROKER_IDS,
    BROKER_TOPICS,
    ConsumerRegistration,
    ZkConsumerRegistry,
)

__all__ = ["Consumer", "ConsumerConfig", "ConsumerConnector", "ConsumerRebalanceFailedException"]

log = logging.getLogger(__name__)


class ConsumerRebalanceFailedException(Exception):
    """No rebalance attempt succeeded within ``rebalance.max.retries`` (partitions still owned by others)."""


class ConsumerConnector:
    """See the module docstring. ``ConsumerConnector({"zookeeper.connect": ..., "group.id": ...})``."""

    def __init__(self, config: ConsumerConfig | Mapping[str, Any]) -> None:
        self.config = config if isinstance(config, ConsumerConfig) else ConsumerConfig(config)
        cfg = self.config
        self.group = cfg.group_id
        self.consumer_id = cfg.consumer_id_string()
        self.rebalance_count = 0  # successful rebalances, for monitoring and tests
        self._registry = ZkConsumerRegistry(
            cfg.zookeeper_connect,
            session_timeout_ms=cfg.zookeeper_session_timeout_ms,
            connection_timeout_ms=cfg.zookeeper_connection_timeout_ms,
        ).start()
        self._lock = threading.Lock()  # shared with the streams: consumed offsets and revocation
        self._rebalance_lock = threading.RLock()
        self._commit_lock = threading.Lock()
        self._shutdown = threading.Event()
        self._rebalance_needed = threading.Event()
        self._reregister = False
        self._client: KafkaClient | None = None
        self._fetch_client: KafkaClient | None = None
        self._offsets: ConnectorOffsets | None = None
        self._fetcher: ConnectorFetcher | None = None
        self._owned: dict[TopicPartition, tuple[PartitionTopicInfo, str]] = {}
        self._committed: dict[TopicPartition, int] = {}
        self._streams: list[KafkaStream] = []
        self._queues: dict[tuple[str | None, str], queue.Queue] = {}  # (topic or None for a filter, thread id)
        self._topic_count: dict[str, int] | None = None
        self._registration: ConsumerRegistration | None = None
        self._filter: TopicFilter | None = None
        self._filter_streams = 0
        self._filter_topics: frozenset[str] = frozenset()
        self._watched_topics: set[str] = set()
        self._threads: list[threading.Thread] = []

    # the seeds' API ----------------------------------------------------------------------------
    def create_message_streams(self, topic_count: Mapping[str, int]) -> dict[str, list[KafkaStream]]:
        """``{topic: [KafkaStream] * n}`` for ``{topic: n}``; registers the consumer and rebalances."""
        self._check_fresh()
        self._topic_count = dict(topic_count)
        out: dict[str, list[KafkaStream]] = {}
        for topic, threads in consumer_thread_ids(self.consumer_id, self._topic_count).items():
            out[topic] = [self._new_stream((topic, thread)) for thread in threads]
        self._start(ConsumerRegistration(self._topic_count, "static"))
        return out

    def create_message_streams_by_filter(self, topic_filter: TopicFilter, num_streams: int = 1) -> list[KafkaStream]:
        """``num_streams`` streams over every allowed topic, now and created later."""
        self._check_fresh()
        if num_streams < 1:
            raise ValueError(f"num_streams must be >= 1, got {num_streams}")
        self._filter, self._filter_streams = topic_filter, num_streams
        streams = [self._new_stream((None, f"{self.consumer_id}-{i}")) for i in range(num_streams)]
        self._start(ConsumerRegistration({topic_filter.regex: num_streams}, topic_filter.pattern))
        return streams

    def commit_offsets(self) -> None:
        """Commit the consumed offset of every owned partition that moved since its last commit."""
        with self._commit_lock:  # a rebalance's commit waits: no stale offset lands after a release
            with self._lock:
                offsets = {tp: info.consumed_offset for tp, (info, _) in self._owned.items() if not info.revoked}
            self._commit_locked(offsets)

    def shutdown(self) -> None:
        """See the module docstring. Idempotent."""
        if self._shutdown.is_set():
            return
        self._shutdown.set()
        self._rebalance_needed.set()
        self._registry.cancel_watches()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join()
        with self._rebalance_lock:
            try:
                if self._offsets is not None:
                    self._give_up_partitions()
                self._registry.unregister_consumer(self.group, self.consumer_id)
            finally:
                for stream in self._streams:
                    stream.clear()
                    stream.chunks.put(SHUTDOWN)
                for client in (self._client, self._fetch_client):
                    if client is not None:
                        client.close()
                self._registry.close()

    def __enter__(self) -> ConsumerConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # registration ------------------------------------------------------------------------------
    def _check_fresh(self) -> None:
        if self._shutdown.is_set():
            raise RuntimeError("the connector is shut down")
        if self._streams:
            raise RuntimeError("a ConsumerConnector creates its message streams once")

    def _new_stream(self, key: tuple[str | None, str]) -> KafkaStream:
        chunks: queue.Queue = queue.Queue(self.config.queued_max_message_chunks)
        self._queues[key] = chunks
        stream = KafkaStream(chunks, self._lock, self.config.consumer_timeout_ms)
        self._streams.append(stream)
        return stream

    def _start(self, registration: ConsumerRegistration) -> None:
        self._registration = registration
        self._connect_kafka()
        self._registry.register_consumer(self.group, self.consumer_id, registration)
        self._registry.watch_children(self._registry.ids_path(self.group), lambda _: self._rebalance_needed.set())
        self._registry.watch_children(BROKER_IDS, lambda _: self._rebalance_needed.set())
        if self._filter is not None:
            self._filter_topics = self._allowed(self._registry.topics())
            self._registry.watch_children(BROKER_TOPICS, self._on_topics)
        self._registry.on_new_session(self._on_new_session)
        self._synced_rebalance()
        self._spawn(self._rebalance_loop, "rebalance")
        if self.config.auto_commit_enable:
            self._spawn(self._auto_commit_loop, "auto-commit")

    def _spawn(self, target: Any, what: str) -> None:
        t = threading.Thread(target=target, name=f"{self.consumer_id}-{what}", daemon=True)
        self._threads.append(t)
        t.start()

    def _connect_kafka(self) -> None:
        """Clients bootstrapped from ``/brokers/ids``: one for offsets and metadata, one for the fetcher."""
        cfg = self.config
        brokers = self._registry.brokers(cfg.security_protocol, cfg.listener_name)
        if not brokers:
            raise RuntimeError(f"no broker is registered under {BROKER_IDS} of {cfg.zookeeper_connect}")
        settings = {
            "bootstrap.servers": ",".join(brokers.values()),
            "client.id": cfg.client_id,
            "request.timeout.ms": cfg.socket_timeout_ms,
        }
        self._client = KafkaClient(cfg.client_config(settings))
        self._fetch_client = KafkaClient(cfg.client_config({**settings, "default.api.timeout.ms": 10000}))
        if cfg.security_protocol != "PLAINTEXT":
            # authenticate now: a wrong password or an untrusted certificate raises here (not retriable),
            # instead of surfacing later as a fetcher thread's log lines
            self._client.refresh_metadata([])
        self._offsets = ConnectorOffsets(
            self.group,
            self.config.offsets_storage,
            self.config.dual_commit_enabled,
            self._registry,
            GroupAdmin(self._client),
        )

    def _allowed(self, topics: list[str]) -> frozenset[str]:
        assert self._filter is not None
        return frozenset(t for t in topics if self._filter.is_topic_allowed(t, self.config.exclude_internal_topics))

    def _on_topics(self, topics: list[str]) -> None:
        """Watch of ``/brokers/topics`` (kazoo's thread): rebalance when the allowed topics changed."""
        if self._allowed(topics) != self._filter_topics:
            self._rebalance_needed.set()

    def _on_new_session(self) -> None:
        self._reregister = True
        self._rebalance_needed.set()

    # rebalance ---------------------------------------------------------------------------------
    def _rebalance_loop(self) -> None:
        while True:
            self._rebalance_needed.wait()
            if self._shutdown.is_set():
                return
            self._rebalance_needed.clear()
            try:
                if self._reregister:
                    self._reregister = False
                    assert self._registration is not None
                    self._registry.register_consumer(self.group, self.consumer_id, self._registration)
                self._synced_rebalance()
            except Exception:  # noqa: BLE001 - try again later rather than stop consuming for good
                log.exception("rebalance of consumer %s failed; retrying", self.consumer_id)
                if not self._shutdown.wait(self.config.rebalance_backoff_ms / 1000.0):
                    self._rebalance_needed.set()

    def _synced_rebalance(self) -> None:
        cfg = self.config
        with self._rebalance_lock:
            for attempt in range(cfg.rebalance_max_retries):
                if self._shutdown.is_set():
                    return
                if self._rebalance():
                    self.rebalance_count += 1
                    return
                log.info("rebalance attempt %d of consumer %s failed; backing off", attempt + 1, self.consumer_id)
                if self._shutdown.wait(cfg.rebalance_backoff_ms / 1000.0):
                    return
        raise ConsumerRebalanceFailedException(
            f"consumer {self.consumer_id} of group {self.group} could not claim its partitions after "
            f"{cfg.rebalance_max_retries} attempts (rebalance.max.retries)"
        )

    def _my_threads(self, topics: list[str]) -> dict[str, list[str]]:
        if self._topic_count is not None:
            return consumer_thread_ids(self.consumer_id, self._topic_count)
        self._filter_topics = self._allowed(topics)
        return consumer_thread_ids(self.consumer_id, dict.fromkeys(sorted(self._filter_topics), self._filter_streams))

    def _group_threads(self, topics: list[str]) -> dict[str, list[str]]:
        """Every registered consumer's thread ids per topic, from their ids znodes."""
        out: dict[str, list[str]] = {}
        for cid in self._registry.consumers(self.group):
            reg = self._registry.registration(self.group, cid)
            if reg is None:
                continue
            if reg.pattern == "static":
                counts = reg.subscription
            else:
                ((regex, n),) = reg.subscription.items()
                f = filter_from_registration(reg.pattern, regex)
                counts = {t: n for t in topics if f.is_topic_allowed(t, self.config.exclude_internal_topics)}
            for topic, threads in consumer_thread_ids(cid, counts).items():
                out.setdefault(topic, []).extend(threads)
        return out

    def _rebalance(self) -> bool:
        """One attempt (see the module docstring); False when a partition is still owned by another consumer."""
        topics = self._registry.topics()
        mine = self._my_threads(topics)
        for topic in mine:
            if topic not in self._watched_topics:
                self._watched_topics.add(topic)
                self._registry.watch_data(f"{BROKER_TOPICS}/{topic}", self._rebalance_needed.set)
        self._give_up_partitions()
        if not self._registry.broker_ids():
            log.warning("no broker is registered; consumer %s waits for one", self.consumer_id)
            return True
        partitions = {topic: self._registry.partitions(topic) for topic in mine}
        assignment = assign_for_consumer(mine, partitions, self._group_threads(topics))
        claimed: list[tuple[TopicPartition, str]] = []
        for (topic, partition), thread in sorted(assignment.items()):
            if not self._registry.claim(self.group, topic, partition, thread):
                owner = self._registry.owner(self.group, topic, partition)
                log.info("%s-%d is still owned by %s", topic, partition, owner)
                for tp, t in claimed:
                    self._registry.release(self.group, tp.topic, tp.partition, t)
                return False
            claimed.append((TopicPartition(topic, partition), thread))
        self._take_partitions(claimed)
        return True

    def _give_up_partitions(self) -> None:
        """Stop the fetcher, revoke and clear, commit (auto commit), delete the owner znodes."""
        if self._fetcher is not None:
            self._fetcher.stop()
            self._fetcher = None
        with self._lock:
            owned, self._owned = self._owned, {}
            offsets = {}
            for tp, (info, _) in owned.items():
                info.revoked = True
                offsets[tp] = info.consumed_offset
        for stream in self._streams:
            stream.clear()
        if self.config.auto_commit_enable:
            with self._commit_lock:
                self._commit_locked(offsets)
        for tp, (_, thread) in owned.items():
            self._registry.release(self.group, tp.topic, tp.partition, thread)

    def _take_partitions(self, claimed: list[tuple[TopicPartition, str]]) -> None:
        assert self._offsets is not None and self._client is not None and self._fetch_client is not None
        committed, settled = self._offsets.fetch(tp for tp, _ in claimed)
        missing = [tp for tp, _ in claimed if tp not in committed]
        reset = OffsetSpec.EARLIEST if self.config.auto_offset_reset == "smallest" else OffsetSpec.LATEST
        start = dict(committed)
        if missing:
            start.update(self._client.list_offsets(dict.fromkeys(missing, reset)))
        owned = {}
        for tp, thread in claimed:
            key = (tp.topic, thread) if self._topic_count is not None else (None, thread)
            offset = start[tp]
            owned[tp] = (PartitionTopicInfo(tp.topic, tp.partition, self._queues[key], offset, offset), thread)
        with self._commit_lock:
            self._committed = {tp: o for tp, o in committed.items() if tp in settled}
        with self._lock:
            self._owned = owned
        cfg = self.config
        self._fetcher = ConnectorFetcher(
            self._fetch_client,
            [info for info, _ in owned.values()],
            max_bytes=cfg.fetch_message_max_bytes,
            wait_ms=cfg.fetch_wait_max_ms,
            min_bytes=cfg.fetch_min_bytes,
            backoff_ms=cfg.refresh_leader_backoff_ms,
            reset=cfg.auto_offset_reset,
            name=f"{self.consumer_id}-fetcher",
        ).start()
        log.info("consumer %s owns %s", self.consumer_id, sorted(owned))

    def owned_partitions(self) -> dict[TopicPartition, str]:
        """``{partition: consumer thread id}`` this connector owns now."""
        with self._lock:
            return {tp: thread for tp, (_, thread) in self._owned.items()}

    # offsets -----------------------------------------------------------------------------------
    def _commit_locked(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit the offsets that differ from the last commit (caller holds the commit lock)."""
        if self._offsets is None:
            return
        changed = {tp: o for tp, o in offsets.items() if self._committed.get(tp) != o}
        self._offsets.commit(changed)
        self._committed.update(changed)

    def _auto_commit_loop(self) -> None:
        interval = self.config.auto_commit_interval_ms / 1000.0
        while not self._shutdown.wait(interval):
            try:
                self.commit_offsets()
            except Exception:  # noqa: BLE001 - the next interval tries again
                log.exception("auto commit of consumer %s failed", self.consumer_id)


class Consumer:
    """``Consumer.create(config)``: the seeds' factory (``kafka.consumer.Consumer.create``)."""

    @staticmethod
    def create(config: ConsumerConfig | Mapping[str, Any]) -> ConsumerConnector:
        return ConsumerConnector(config)
