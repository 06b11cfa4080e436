"""Prometheus metrics of one broker, served over HTTP at ``/metrics`` when ``metrics.port`` >= 0.

Names follow Kafka's JMX metrics as the Prometheus JMX exporter's usual Kafka rules render them
(``kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=t`` ->
``kafka_server_brokertopicmetrics_bytesin_total{topic="t"}``); per-group lag uses kafka_exporter's
``kafka_consumergroup_lag``. Every series carries no broker label: one endpoint per broker, as with Kafka.

Counted as they happen (``BrokerMetrics`` methods, called on the broker's event loop):

    kafka_network_requestmetrics_requests_total{request,version}       requests answered (or acks=0 done)
    kafka_network_requestmetrics_totaltimems{request}                  histogram, receipt -> response ready
    kafka_network_requestmetrics_requestqueuetimems{request}           histogram, receipt -> handler started
    kafka_server_brokertopicmetrics_bytesin_total{topic}               produced bytes appended as leader
    kafka_server_brokertopicmetrics_messagesin_total{topic}            produced records appended as leader
    kafka_server_brokertopicmetrics_bytesout_total{topic}              bytes sent to consumers
    kafka_server_brokertopicmetrics_replicationbytesout_total{topic}   bytes sent to followers
    kafka_server_replicamanager_isrshrinks_total / _isrexpands_total   ISR changes this broker made as leader
    kafkalog_follower_fetch_requests_total{topic}   partitions answered to consumers as a follower (KIP-392)
    kafkalog_follower_fetch_bytes_total{topic}      record bytes of those answers (also in bytesout)

Read when scraped, from a snapshot taken on the event loop (so the HTTP thread never walks live state):

    kafka_log_log_size{topic,partition}, kafka_log_log_numlogsegments, kafka_log_log_logendoffset,
    kafka_log_log_logstartoffset, kafka_cluster_partition_highwatermark   every local replica
    kafka_server_replicamanager_partitioncount, _leadercount, _underreplicatedpartitions (led here, ISR short)
    kafka_controller_kafkacontroller_activecontrollercount (1 on the controller), _offlinepartitionscount
      (partitions without a live leader, reported by the active controller only, as Kafka)
    kafka_coordinator_group_groupmetadatamanager_numgroups{state}   groups this broker coordinates, by state
    kafka_coordinator_transaction_transactionstatemanager_numtransactions{state}   transactional ids this
      broker coordinates, by state (kafkalog's own, named as NumGroups: a transaction stuck in Ongoing or
      PrepareCommit shows here)
    kafka_consumergroup_lag{consumergroup,topic,partition}   high watermark - committed offset, for the groups this
      broker coordinates and the partitions it holds a replica of (a follower's high watermark trails the
      leader's by at most a fetch)
    kafka_server_socketservermetrics_connection_count   open client connections

Client quotas (``watch_quotas``; read when scraped from ``QuotaManager.figures``): Kafka's
``kafka.server:type=Produce|Fetch|Request,user=<u>,client-id=<c>`` sensors, one series per sensor (labels
``user`` and ``client_id``, "" for the part its quota entity does not name):

    kafka_server_produce_byte_rate, kafka_server_fetch_byte_rate   bytes/s over the quota window
    kafka_server_request_request_time                              handler time, % of one thread
    kafka_server_{produce,fetch,request}_throttle_time             mean throttle time (ms) over the window

Client telemetry (KIP-714; ``broker.telemetry.prometheus.ClientTelemetryCollector``, which ``Broker`` registers in
``registry``): the metrics clients push, under their own names (``org_apache_kafka_producer_record_queue_time_avg``
{client_instance_id, client_id, the metric's attributes}), and ``kafka_server_client_metrics_instance_count`` /
``_subscription_count``.

Fetch sessions (``watch_fetch_sessions``; read when scraped from ``FetchSessionCache.figures``), Kafka's
``kafka.server:type=FetchSessionCache`` metrics:

    kafka_server_fetchsessioncache_numincrementalfetchsessions          incremental fetch sessions cached
    kafka_server_fetchsessioncache_numincrementalfetchpartitionscached  partitions in those sessions
    kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total   sessions evicted to make room

Each component reports its own figures (``ReplicaManager.replica_figures``, ``Controller.is_active`` and
``offline_partition_count``, ``GroupCoordinator.groups_by_state`` and ``consumer_lag``,
``TransactionCoordinator.transactions_by_state``); ``Broker._metrics_snapshot`` only puts them together. The
figure types live here, in the bottom layer, so every component may import them.

Concurrency: counters are thread-safe (prometheus_client); the HTTP server is prometheus_client's own
daemon thread; ``collect`` waits at most ``SNAPSHOT_TIMEOUT_S`` for the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger("kafkalog.metrics")

SNAPSHOT_TIMEOUT_S = 5.0
_TIME_BUCKETS_MS = (0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


@dataclass(frozen=True)
class ReplicaFigures:
    """One local replica, as ``ReplicaManager.replica_figures`` reports it."""

    topic: str
    partition: int
    size: int
    segments: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    is_leader: bool
    under_replicated: bool


class ConsumerLag(NamedTuple):
    """A group's lag on one partition: high watermark - committed offset, at least 0
    (``GroupCoordinator.consumer_lag``)."""

    group: str
    topic: str
    partition: int
    lag: int


@dataclass
class BrokerSnapshot:
    """What the scrape-time gauges report, read on the event loop."""

    replicas: list[ReplicaFigures] = field(default_factory=list)
    active_controller: bool = False
    offline_partitions: int = 0
    groups_by_state: dict[str, int] = field(default_factory=dict)
    """Kafka's group state name (``Empty``, ``Stable``...) -> groups coordinated here in it."""
    lag: list[ConsumerLag] = field(default_factory=list)
    transactions_by_state: dict[str, int] = field(default_factory=dict)
    """Kafka's transaction state name (``Ongoing``, ``PrepareCommit``...) -> transactional ids coordinated here."""
    connections: int = 0


class QuotaFigure(NamedTuple):
    """One client quota sensor (``broker.quotas``): ``kafka.server:type=<group>,user=..,client-id=..``."""

    group: str
    """``Produce``, ``Fetch`` or ``Request``."""
    rate_metric: str
    """``byte-rate`` (Produce, Fetch) or ``request-time`` (Request, % of one thread)."""
    user: str
    client_id: str
    rate: float
    throttle_time_ms: float
    """Mean throttle time of the sensor's throttled requests over the window (Kafka's ``throttle-time``)."""
    bound: float | None


class BrokerMetrics:
    """The metrics of one broker; ``snapshot`` returns a ``BrokerSnapshot`` and runs on ``loop``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "kafka_network_requestmetrics_requests", "Requests served.", ["request", "version"], registry=r
        )
        self.total_time = Histogram(
            "kafka_network_requestmetrics_totaltimems",
            "Time from a request's receipt to its response being ready, in ms.",
            ["request"],
            buckets=_TIME_BUCKETS_MS,
            registry=r,
        )
        self.queue_time = Histogram(
            "kafka_network_requestmetrics_requestqueuetimems",
            "Time from a request's receipt to its handler starting, in ms.",
            ["request"],
            buckets=_TIME_BUCKETS_MS,
            registry=r,
        )
        self.bytes_in = Counter(
            "kafka_server_brokertopicmetrics_bytesin", "Produced bytes appended here as leader.", ["topic"], registry=r
        )
        self.messages_in = Counter(
            "kafka_server_brokertopicmetrics_messagesin",
            "Produced records appended here as leader.",
            ["topic"],
            registry=r,
        )
        self.bytes_out = Counter(
            "kafka_server_brokertopicmetrics_bytesout", "Record bytes sent to consumers.", ["topic"], registry=r
        )
        self.replication_bytes_out = Counter(
            "kafka_server_brokertopicmetrics_replicationbytesout",
            "Record bytes sent to followers.",
            ["topic"],
            registry=r,
        )
        self.follower_fetch_requests = Counter(
            "kafkalog_follower_fetch_requests",
            "Partitions answered to consumer fetches by this broker as a follower (KIP-392 follower fetching).",
            ["topic"],
            registry=r,
        )
        self.follower_fetch_bytes = Counter(
            "kafkalog_follower_fetch_bytes",
            "Record bytes sent to consumers by this broker as a follower (KIP-392 follower fetching).",
            ["topic"],
            registry=r,
        )
        self.isr_shrinks = Counter(
            "kafka_server_replicamanager_isrshrinks", "ISR shrinks made by this broker as leader.", registry=r
        )
        self.isr_expands = Counter(
            "kafka_server_replicamanager_isrexpands", "ISR expansions made by this broker as leader.", registry=r
        )
        self.successful_authentications = Counter(
            "kafka_server_socketservermetrics_successfulauthentication",
            "SASL authentications (re-authentications included) that succeeded.",
            ["listener", "mechanism"],
            registry=r,
        )
        self.failed_authentications = Counter(
            "kafka_server_socketservermetrics_failedauthentication",
            "SASL authentications (re-authentications included) that failed.",
            ["listener", "mechanism"],
            registry=r,
        )
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self._server: Any = None
        self._thread: Any = None
        self.port: int | None = None

    # -- events (event loop) -----------------------------------------------------------------------
    def _child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, looked up once (prometheus_client's lookup takes a lock and builds
        keys: a cost on every request otherwise)."""
        key = (id(metric), labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def request_done(self, request: str, version: int, total_s: float, queue_s: float) -> None:
        self._child(self.requests, request, str(version)).inc()
        self._child(self.total_time, request).observe(total_s * 1000)
        self._child(self.queue_time, request).observe(queue_s * 1000)

    def produced(self, topic: str, size: int, records: int) -> None:
        self._child(self.bytes_in, topic).inc(size)
        self._child(self.messages_in, topic).inc(records)

    def fetched(self, topic: str, size: int, *, follower: bool) -> None:
        self._child(self.replication_bytes_out if follower else self.bytes_out, topic).inc(size)

    def follower_fetch(self, topic: str, size: int) -> None:
        """A partition of ``topic`` answered to a consumer by this broker as a follower, with ``size`` record bytes."""
        self._child(self.follower_fetch_requests, topic).inc()
        if size:
            self._child(self.follower_fetch_bytes, topic).inc(size)

    def authenticated(self, listener: str, mechanism: str, *, success: bool) -> None:
        """One SASL exchange on ``listener`` ended (``mechanism`` as the client asked for it)."""
        metric = self.successful_authentications if success else self.failed_authentications
        self._child(metric, listener, mechanism).inc()

    def isr_changed(self, *, expanded: bool) -> None:
        """This broker, as leader, changed a partition's ISR."""
        (self.isr_expands if expanded else self.isr_shrinks).inc()

    # -- scrape-time gauges ------------------------------------------------------------------------
    def watch(self, snapshot: Callable[[], BrokerSnapshot], loop: asyncio.AbstractEventLoop) -> None:
        """Register the gauges read from ``snapshot()`` (run on ``loop`` at each scrape)."""
        self.registry.register(_SnapshotCollector(snapshot, loop))

    def watch_quotas(self, figures: Callable[[], list[QuotaFigure]]) -> None:
        """Register the client quota gauges, read from ``figures()`` (thread-safe) at each scrape."""
        self.registry.register(_QuotaCollector(figures))

    def watch_fetch_sessions(self, figures: Callable[[], Any]) -> None:
        """Register the fetch session cache gauges, read from ``figures()`` (``FetchSessionCache.figures``:
        sessions, partitions cached, evictions; plain integers, safe to read from the scrape thread)."""
        self.registry.register(_FetchSessionCollector(figures))

    # -- HTTP ------------------------------------------------------------------------------------
    def serve(self, host: str, port: int) -> int:
        """Serve ``/metrics`` on ``host:port`` (0: any free port) in a daemon thread; returns the port."""
        from prometheus_client import start_http_server

        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        self.port = self._server.server_port
        return self.port

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _SnapshotCollector(Collector):
    def __init__(self, snapshot: Callable[[], BrokerSnapshot], loop: asyncio.AbstractEventLoop) -> None:
        self._snapshot = snapshot
        self._loop = loop

    def describe(self) -> list:
        return []  # nothing to describe up front: registering must not take a snapshot

    def collect(self) -> Iterator[GaugeMetricFamily]:
        async def take() -> BrokerSnapshot:
            return self._snapshot()

        try:
            snap = asyncio.run_coroutine_threadsafe(take(), self._loop).result(SNAPSHOT_TIMEOUT_S)
        except Exception as e:  # a stopping broker: the counters are still served
            log.debug("metrics snapshot failed: %r", e)
            return
        yield from _gauges(snap)


class _QuotaCollector(Collector):
    def __init__(self, figures: Callable[[], list[QuotaFigure]]) -> None:
        self._figures = figures

    def describe(self) -> list:
        return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, GaugeMetricFamily] = {}

        def family(name: str, text: str) -> GaugeMetricFamily:
            if name not in families:
                families[name] = GaugeMetricFamily(name, text, labels=["user", "client_id"])
            return families[name]

        for f in self._figures():
            prefix = f"kafka_server_{f.group.lower()}_"
            labels = [f.user, f.client_id]
            rate = family(
                prefix + f.rate_metric.replace("-", "_"), f"{f.group} quota {f.rate_metric} per user/client-id."
            )
            rate.add_metric(labels, f.rate)
            throttle = family(prefix + "throttle_time", f"{f.group} quota mean throttle time (ms) per user/client-id.")
            throttle.add_metric(labels, f.throttle_time_ms)
        yield from families.values()


class _FetchSessionCollector(Collector):
    def __init__(self, figures: Callable[[], Any]) -> None:
        self._figures = figures

    def describe(self) -> list:
        return []

    def collect(self) -> Iterator[Any]:
        sessions, partitions, evictions = self._figures()
        prefix = "kafka_server_fetchsessioncache_"
        yield GaugeMetricFamily(prefix + "numincrementalfetchsessions", "Incremental fetch sessions.", value=sessions)
        yield GaugeMetricFamily(
            prefix + "numincrementalfetchpartitionscached",
            "Partitions in incremental fetch sessions.",
            value=partitions,
        )
        yield CounterMetricFamily(
            prefix + "incrementalfetchsessionevictions", "Fetch sessions evicted to make room.", value=evictions
        )


def _gauges(snap: BrokerSnapshot) -> Iterator[GaugeMetricFamily]:
    labels = ["topic", "partition"]
    per_replica = [
        ("kafka_log_log_size", "Bytes of the replica's segments.", lambda r: r.size),
        ("kafka_log_log_numlogsegments", "Segments of the replica.", lambda r: r.segments),
        ("kafka_log_log_logstartoffset", "First offset of the replica.", lambda r: r.log_start_offset),
        ("kafka_log_log_logendoffset", "Next offset of the replica.", lambda r: r.log_end_offset),
        ("kafka_cluster_partition_highwatermark", "High watermark known here.", lambda r: r.high_watermark),
    ]
    for name, text, value in per_replica:
        g = GaugeMetricFamily(name, text, labels=labels)
        for r in snap.replicas:
            g.add_metric([r.topic, str(r.partition)], value(r))
        yield g
    led = [r for r in snap.replicas if r.is_leader]
    yield GaugeMetricFamily(
        "kafka_server_replicamanager_partitioncount", "Replicas hosted here.", value=len(snap.replicas)
    )
    yield GaugeMetricFamily("kafka_server_replicamanager_leadercount", "Partitions led here.", value=len(led))
    yield GaugeMetricFamily(
        "kafka_server_replicamanager_underreplicatedpartitions",
        "Partitions led here whose ISR is smaller than their replicas.",
        value=sum(r.under_replicated for r in led),
    )
    yield GaugeMetricFamily(
        "kafka_controller_kafkacontroller_activecontrollercount",
        "1 on the active controller.",
        value=int(snap.active_controller),
    )
    yield GaugeMetricFamily(
        "kafka_controller_kafkacontroller_offlinepartitionscount",
        "Partitions without a live leader (the active controller reports them).",
        value=snap.offline_partitions,
    )
    g = GaugeMetricFamily(
        "kafka_coordinator_group_groupmetadatamanager_numgroups",
        "Groups coordinated here, by state.",
        labels=["state"],
    )
    for state, n in sorted(snap.groups_by_state.items()):
        g.add_metric([state], n)
    yield g
    g = GaugeMetricFamily(
        "kafka_coordinator_transaction_transactionstatemanager_numtransactions",
        "Transactional ids coordinated here, by state.",
        labels=["state"],
    )
    for state, n in sorted(snap.transactions_by_state.items()):
        g.add_metric([state], n)
    yield g
    g = GaugeMetricFamily(
        "kafka_consumergroup_lag",
        "High watermark minus committed offset.",
        labels=["consumergroup", "topic", "partition"],
    )
    for entry in snap.lag:
        g.add_metric([entry.group, entry.topic, str(entry.partition)], entry.lag)
    yield g
    yield GaugeMetricFamily(
        "kafka_server_socketservermetrics_connection_count", "Open client connections.", value=snap.connections
    )
