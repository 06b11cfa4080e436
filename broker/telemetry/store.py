"""``ClientTelemetry``: the broker's side of KIP-714 (Kafka's ``ClientMetricsManager``): the subscriptions in
force, the client instances that asked for theirs, the checks of each push, and the metrics pushed, kept for
the Prometheus endpoint.

Client instances (at most ``INSTANCE_CACHE_SIZE``, least recently used evicted, as Kafka's cache): created on
the first GetTelemetrySubscriptions or PushTelemetry naming an id (an all-zero id gets a new random one), with
the subscription resolved from every subscription in force; re-resolved (timestamps reset) on their next request
after any subscription changed; forgotten ``max(60 s, 3 x push interval)`` after their last request, or when the
connection they last used closes (``bind_connection``/``connection_closed``, Kafka's disconnect listener: a client
that reconnects starts afresh instead of being throttled).

Kafka's rules, per instance (times from ``clock``, milliseconds):

- GetTelemetrySubscriptions sooner than the push interval after its last request of either kind is
  THROTTLING_QUOTA_EXCEEDED, unless its last push failed with UNKNOWN_SUBSCRIPTION_ID or
  UNSUPPORTED_COMPRESSION_TYPE.
- PushTelemetry, checked in this order: after a terminating push, INVALID_REQUEST; sooner than the interval
  after the previous push (the first push after a GetTelemetrySubscriptions is always accepted, clients add
  jitter), THROTTLING_QUOTA_EXCEEDED unless this push is the terminating one; a subscription id other than the
  instance's, UNKNOWN_SUBSCRIPTION_ID; a compression type that is not a record codec (0-4),
  UNSUPPORTED_COMPRESSION_TYPE; a payload over ``max_bytes``, TELEMETRY_TOO_LARGE; then the payload is
  decompressed (over ``max_bytes`` decompressed: TELEMETRY_TOO_LARGE) and decoded (``broker.telemetry.otlp``;
  undecodable: INVALID_RECORD). ``terminating`` is remembered even when the push is refused.

Pushed metrics (``ClientSeries``), per instance: a gauge keeps its last value; a delta sum adds each push to
what it had; a cumulative sum keeps its last value; histograms and summaries are not kept. Each series is
labelled with the point's attributes plus ``client_instance_id`` and ``client_id``. An instance's metrics are
dropped ``max(60 s, 3 x push interval)`` after its last accepted push (a terminating push included); at most
``max_clients`` instances keep metrics (the least recently pushed one is dropped first).

Concurrency: the handlers call on the broker's event loop, the Prometheus collector (``series``) on the HTTP
thread: every method takes the one lock.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from spark_kafkalog.protocol import ErrorCode

from .otlp import CUMULATIVE, DELTA, OtlpDecodeError, PayloadTooLargeError, decode_metrics_data, decompress_payload
from .subscriptions import (
    ClientInstanceMetadata,
    ClientMetricsSubscription,
    InvalidSubscriptionError,
    ResolvedSubscription,
    parse_subscription,
    resolve,
)

__all__ = [
    "ACCEPTED_COMPRESSION_TYPES",
    "INSTANCE_CACHE_SIZE",
    "ClientInfo",
    "ClientSeries",
    "ClientTelemetry",
    "SubscriptionAnswer",
    "kafka_uuid_string",
]

log = logging.getLogger("kafkalog.telemetry")

ACCEPTED_COMPRESSION_TYPES = (4, 3, 1, 2)
"""zstd, lz4, gzip, snappy: Kafka's order (clients take the first they support)."""
INSTANCE_CACHE_SIZE = 16384
"""Client instances remembered (Kafka's ``CACHE_MAX_SIZE``)."""
MIN_EXPIRY_MS = 60_000
"""An instance (and its metrics) lives at least this long after its last request (Kafka's cache expiry)."""
_RESERVED = (uuid.UUID(int=0), uuid.UUID(int=1))


def kafka_uuid_string(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def _new_instance_id(taken: Callable[[uuid.UUID], bool]) -> uuid.UUID:
    """Kafka's ``Uuid.randomUuid``: random, never reserved, never printing with a leading "-", not in use."""
    while True:
        value = uuid.uuid4()
        if value not in _RESERVED and not kafka_uuid_string(value).startswith("-") and not taken(value):
            return value


@dataclass(frozen=True)
class ClientInfo:
    """What a request tells of its client: ``client.id``, the software it named in ApiVersions (None when it
    named none) and its connection's address and port."""

    client_id: str | None
    software_name: str | None
    software_version: str | None
    source_address: str | None
    source_port: str | None

    def metadata(self, instance_id: uuid.UUID) -> ClientInstanceMetadata:
        return ClientInstanceMetadata(
            kafka_uuid_string(instance_id),
            self.client_id,
            self.software_name,
            self.software_version,
            self.source_address,
            self.source_port,
        )


@dataclass(frozen=True)
class SubscriptionAnswer:
    """A GetTelemetrySubscriptions answer: an error code, and with NONE the instance id and its subscription."""

    error_code: int
    instance_id: uuid.UUID
    subscription: ResolvedSubscription | None


@dataclass(frozen=True)
class ClientSeries:
    """One pushed series, as the collector exposes it."""

    name: str
    """The client's metric name (``org.apache.kafka.producer.record.queue.time.avg``)."""
    kind: str
    """``gauge`` or ``counter`` (a monotonic sum)."""
    description: str
    labels: tuple[tuple[str, str], ...]
    """The point's attributes plus ``client_instance_id`` and ``client_id``, sorted by name."""
    value: float


@dataclass
class _Instance:
    instance_id: uuid.UUID
    metadata: ClientInstanceMetadata
    subscription: ResolvedSubscription
    version: int
    last_get_ms: float | None = None
    last_push_ms: float | None = None
    last_request_ms: float = 0.0
    terminating: bool = False
    last_error: int = ErrorCode.NONE

    @property
    def expiry_ms(self) -> float:
        return max(MIN_EXPIRY_MS, 3 * self.subscription.interval_ms)


@dataclass
class _Metrics:
    client_id: str
    expiry_ms: float
    last_push_ms: float
    series: dict[tuple[str, tuple[tuple[str, str], ...]], list] = field(default_factory=dict)
    """(name, labels) -> [kind, description, value]."""


class ClientTelemetry:
    """Subscriptions, client instances and pushed metrics of one broker. ``max_bytes``: Kafka's
    ``telemetry.max.bytes``; ``max_clients``: instances whose metrics are kept; ``clock``: milliseconds,
    monotonic."""

    def __init__(
        self,
        *,
        max_bytes: int = 1024 * 1024,
        max_clients: int = 1000,
        clock: Callable[[], float] = lambda: time.monotonic() * 1000,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_clients = max_clients
        self._clock = clock
        self._lock = threading.Lock()
        self._subscriptions: dict[str, ClientMetricsSubscription] = {}
        self._version = 0
        self._instances: OrderedDict[uuid.UUID, _Instance] = OrderedDict()
        self._metrics: OrderedDict[uuid.UUID, _Metrics] = OrderedDict()
        self._connections: OrderedDict[int, uuid.UUID] = OrderedDict()

    # -- subscriptions (from the registry: ``ClientMetricsSync``) ------------------------------------
    def set_subscription(self, name: str, config: Mapping[str, str]) -> None:
        """Put subscription ``name`` in force with ``config``; an empty config removes it. An invalid config
        (written around the broker's checks) is logged and removes it."""
        sub = self._parse(name, config)
        with self._lock:
            if sub is None and name not in self._subscriptions:
                return
            if sub is None:
                del self._subscriptions[name]
            else:
                self._subscriptions[name] = sub
            self._version += 1

    def replace_subscriptions(self, configs: Mapping[str, Mapping[str, str]]) -> None:
        """Exactly these subscriptions in force (names with an empty or invalid config left out)."""
        subs = {n: s for n, c in configs.items() if (s := self._parse(n, c)) is not None}
        with self._lock:
            if subs != self._subscriptions:
                self._subscriptions = subs
                self._version += 1

    @staticmethod
    def _parse(name: str, config: Mapping[str, str]) -> ClientMetricsSubscription | None:
        if not config:
            return None
        try:
            return parse_subscription(name, config)
        except InvalidSubscriptionError as e:
            log.error("ignoring client metrics subscription %r: %s", name, e)
            return None

    def subscription_names(self) -> list[str]:
        """The subscriptions in force, sorted."""
        with self._lock:
            return sorted(self._subscriptions)

    # -- requests -------------------------------------------------------------------------------------
    def get_subscriptions(self, instance_id: uuid.UUID, client: ClientInfo) -> SubscriptionAnswer:
        """GetTelemetrySubscriptions: the instance's subscription, for a new instance when ``instance_id`` is
        zero (module docstring: the throttle rule)."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            if instance_id == _RESERVED[0]:
                instance_id = _new_instance_id(lambda u: u in self._instances)
            inst = self._instance(instance_id, client, now)
            last = max((t for t in (inst.last_get_ms, inst.last_push_ms) if t is not None), default=None)
            if last is not None and now - last < inst.subscription.interval_ms:
                if inst.last_error not in (ErrorCode.UNKNOWN_SUBSCRIPTION_ID, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE):
                    return SubscriptionAnswer(ErrorCode.THROTTLING_QUOTA_EXCEEDED, instance_id, None)
            else:
                inst.last_get_ms = now
            inst.last_error = ErrorCode.NONE
            return SubscriptionAnswer(ErrorCode.NONE, instance_id, inst.subscription)

    def push(
        self,
        instance_id: uuid.UUID,
        subscription_id: int,
        terminating: bool,
        compression_type: int,
        payload: bytes,
        client: ClientInfo,
    ) -> int:
        """PushTelemetry: the error code answering it (module docstring: the checks, in order); the metrics of
        an accepted payload are kept."""
        if instance_id in _RESERVED:
            return ErrorCode.INVALID_REQUEST
        now = self._clock()
        with self._lock:
            self._expire(now)
            inst = self._instance(instance_id, client, now)
            try:
                error = self._check_push(inst, subscription_id, terminating, compression_type, payload, now)
            finally:
                inst.terminating = terminating
            if error != ErrorCode.NONE:
                inst.last_error = error
                return error
        metrics = None
        if payload:  # decoded without the lock: the collector must not wait for a large payload
            try:
                metrics = decode_metrics_data(decompress_payload(compression_type, payload, self.max_bytes))
            except PayloadTooLargeError as e:
                log.warning("client instance %s: %s", kafka_uuid_string(instance_id), e)
                error = ErrorCode.TELEMETRY_TOO_LARGE
            except OtlpDecodeError as e:
                log.warning("client instance %s pushed an undecodable payload: %s", kafka_uuid_string(instance_id), e)
                error = ErrorCode.INVALID_RECORD
        with self._lock:
            inst.last_error = error
            if metrics is not None:
                self._record(inst, metrics, now)
        return error

    def _check_push(
        self,
        inst: _Instance,
        subscription_id: int,
        terminating: bool,
        compression_type: int,
        payload: bytes,
        now: float,
    ) -> int:
        if inst.terminating:
            return ErrorCode.INVALID_REQUEST
        accept = inst.last_push_ms is None or (inst.last_get_ms is not None and inst.last_get_ms > inst.last_push_ms)
        if not accept:
            assert inst.last_push_ms is not None
            accept = now - inst.last_push_ms >= inst.subscription.interval_ms
        if accept:
            inst.last_push_ms = now
        elif not terminating:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        if subscription_id != inst.subscription.subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if not 0 <= compression_type <= 4:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if len(payload) > self.max_bytes:
            return ErrorCode.TELEMETRY_TOO_LARGE
        return ErrorCode.NONE

    def _instance(self, instance_id: uuid.UUID, client: ClientInfo, now: float) -> _Instance:
        """The instance (created, or re-resolved after a subscription change), marked as used now."""
        inst = self._instances.get(instance_id)
        if inst is None or inst.version != self._version:
            metadata = client.metadata(instance_id) if inst is None else inst.metadata
            subscription = resolve(self._subscriptions.values(), metadata, instance_id)
            inst = _Instance(instance_id, metadata, subscription, self._version)
            self._instances[instance_id] = inst
            while len(self._instances) > INSTANCE_CACHE_SIZE:
                self._instances.popitem(last=False)
        self._instances.move_to_end(instance_id)
        inst.last_request_ms = now
        return inst

    def _expire(self, now: float) -> None:
        while self._instances:
            inst = next(iter(self._instances.values()))
            if now - inst.last_request_ms < inst.expiry_ms:
                break
            del self._instances[inst.instance_id]
        for key in [k for k, m in self._metrics.items() if now - m.last_push_ms >= m.expiry_ms]:
            del self._metrics[key]

    def _record(self, inst: _Instance, metrics: Iterable, now: float) -> None:
        kept = self._metrics.get(inst.instance_id)
        if kept is None:
            kept = self._metrics[inst.instance_id] = _Metrics(inst.metadata.client_id or "", 0, now)
        kept.expiry_ms, kept.last_push_ms = inst.expiry_ms, now
        self._metrics.move_to_end(inst.instance_id)
        while len(self._metrics) > self.max_clients:
            self._metrics.popitem(last=False)
        own = (("client_id", kept.client_id), ("client_instance_id", inst.metadata.client_instance_id))
        for metric in metrics:
            if metric.kind == "gauge":
                kind, accumulate = "gauge", False
            elif metric.kind == "sum":
                kind = "counter" if metric.monotonic else "gauge"
                accumulate = metric.temporality == DELTA
                if metric.temporality not in (DELTA, CUMULATIVE):
                    continue
            else:
                continue
            for point in metric.points:
                labels = dict(point.attributes)
                labels.update(own)
                key = (metric.name, tuple(sorted(labels.items())))
                entry = kept.series.get(key)
                if entry is None or entry[0] != kind:
                    kept.series[key] = [kind, metric.description, point.value]
                elif accumulate:
                    entry[2] += point.value
                else:
                    entry[2] = point.value

    # -- connections ------------------------------------------------------------------------------------
    def bind_connection(self, connection_id: int, instance_id: uuid.UUID) -> bool:
        """Remember that ``instance_id`` spoke on ``connection_id``; True the first time this connection is seen
        (the caller then arranges ``connection_closed`` for when it closes)."""
        with self._lock:
            new = connection_id not in self._connections
            self._connections[connection_id] = instance_id
            self._connections.move_to_end(connection_id)
            while len(self._connections) > INSTANCE_CACHE_SIZE:
                self._connections.popitem(last=False)
            return new

    def connection_closed(self, connection_id: int) -> None:
        """The connection closed: forget the instance that last spoke on it (its pushed metrics stay until they
        expire)."""
        with self._lock:
            instance_id = self._connections.pop(connection_id, None)
            if instance_id is not None:
                self._instances.pop(instance_id, None)

    # -- the Prometheus collector ---------------------------------------------------------------------
    def series(self) -> list[ClientSeries]:
        """Every kept series of every instance whose metrics have not expired (thread-safe)."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            return [
                ClientSeries(name, kind, description, labels, value)
                for kept in self._metrics.values()
                for (name, labels), (kind, description, value) in kept.series.items()
            ]

    def instance_count(self) -> int:
        """Client instances remembered now (Kafka's ``client-metrics`` ``instance-count``)."""
        with self._lock:
            return len(self._instances)
