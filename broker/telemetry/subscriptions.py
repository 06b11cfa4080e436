"""Client metrics subscriptions (KIP-714): the ``CLIENT_METRICS`` config resources, which clients they match,
and the subscription a client instance gets from all of them (pure; no I/O).

A subscription is a named config resource (type 16 in DescribeConfigs/IncrementalAlterConfigs, stored as the
entity ``client-metrics/<name>``) with three keys, Kafka's ``ClientMetricsConfigs``:

    metrics       list   metric name prefixes the clients should push; ``*`` = all; empty = none (default)
    interval.ms   int    push interval, 100..3600000 (default 300000)
    match         list   ``<attribute>=<regex>`` pairs, every one must match the whole attribute value; empty
                         (default) = every client. Attributes: client_instance_id, client_id,
                         client_software_name, client_software_version, client_source_address,
                         client_source_port

A client instance's subscription (``resolve``) joins every subscription that matches it: the union of their
metric prefixes (just ``*`` when one asks for all), the shortest of their intervals (the default when none
matches), and the subscription id, Kafka's ``computeSubscriptionId``: CRC-32C of the UTF-8 text
``<Java Set.toString() of the prefixes><interval>`` XOR the Java ``hashCode`` of the client instance id. The
prefixes are put in the order Java's ``HashSet`` iterates them (by hash bucket), so the id is Kafka's own;
two prefixes in one bucket keep the order they were added in, as the ``HashSet`` keeps insertion order within a
bucket: each matching subscription's prefixes in the order of its own ``HashSet`` (a copy of its config's list),
subscriptions by name. Only prefixes of two subscriptions sharing a bucket can give an id other than Kafka's (its
subscriptions are iterated in a ``ConcurrentHashMap``'s order).

Regexes are Python's ``re`` (Kafka: RE2/J): the common syntax (classes, ``.*``, alternation, anchors) means the
same. Thread-safe: immutable values and pure functions.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records.crc import crc32c

__all__ = [
    "CLIENT_METRICS",
    "METRICS",
    "INTERVAL_MS",
    "MATCH",
    "ALL_METRICS",
    "MATCH_ATTRIBUTES",
    "DEFAULT_INTERVAL_MS",
    "CONFIG_DEFAULTS",
    "InvalidSubscriptionError",
    "ClientMetricsSubscription",
    "ClientInstanceMetadata",
    "ResolvedSubscription",
    "parse_subscription",
    "resolve",
    "subscription_id",
    "java_uuid_hash",
]

CLIENT_METRICS = 16
"""``ConfigResource.Type.CLIENT_METRICS``."""
METRICS, INTERVAL_MS, MATCH = "metrics", "interval.ms", "match"
ALL_METRICS = "*"
MATCH_ATTRIBUTES = (
    "client_instance_id",
    "client_id",
    "client_software_name",
    "client_software_version",
    "client_source_address",
    "client_source_port",
)
DEFAULT_INTERVAL_MS = 300_000
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 100, 3_600_000
CONFIG_DEFAULTS = {METRICS: "", INTERVAL_MS: str(DEFAULT_INTERVAL_MS), MATCH: ""}
"""Every key with its default, as DescribeConfigs reports a subscription's keys it does not set."""
CONFIG_TYPES = {METRICS: "list", INTERVAL_MS: "int", MATCH: "list"}
CONFIG_DOCS = {
    METRICS: "Telemetry metric name prefix list",
    INTERVAL_MS: "Metrics push interval in milliseconds",
    MATCH: "Client match criteria",
}
"""Kafka's ``ClientMetricsConfigs`` documentation strings."""


class InvalidSubscriptionError(ValueError):
    """A client metrics config Kafka refuses; ``code`` is the error its alter answers (INVALID_REQUEST for an
    unknown key, an empty name or an interval out of range; INVALID_CONFIG for a bad value or match pattern)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ClientMetricsSubscription:
    """One ``CLIENT_METRICS`` resource, parsed."""

    name: str
    metrics: tuple[str, ...]
    """The prefixes in the config's order, each once."""
    interval_ms: int
    match: tuple[tuple[str, re.Pattern[str]], ...]
    """``(attribute, compiled regex)`` pairs; empty matches every client."""


@dataclass(frozen=True)
class ClientInstanceMetadata:
    """What the broker knows of a client instance when it first asks (Kafka's ``ClientMetricsInstanceMetadata``):
    the id it was given, its ``client.id``, the software it named in ApiVersions (None before that) and the
    address and port of its connection."""

    client_instance_id: str
    """Kafka's ``Uuid.toString()`` form (22 characters of URL-safe base64)."""
    client_id: str | None
    client_software_name: str | None
    client_software_version: str | None
    client_source_address: str | None
    client_source_port: str | None

    def matches(self, subscription: ClientMetricsSubscription) -> bool:
        """Every pattern of ``subscription`` matches the whole of its attribute (a missing attribute matches
        none); a subscription without patterns matches every client."""
        for attribute, pattern in subscription.match:
            value = getattr(self, attribute)
            if value is None or pattern.fullmatch(value) is None:
                return False
        return True


@dataclass(frozen=True)
class ResolvedSubscription:
    """What GetTelemetrySubscriptions answers a client instance with."""

    metrics: tuple[str, ...]
    """The requested prefixes (Kafka's order); ``("*",)`` for all; empty: push nothing."""
    interval_ms: int
    subscription_id: int
    """A signed 32-bit int, as the wire carries it."""


def _list(value: str) -> list[str]:
    """Kafka's ``ConfigDef`` LIST parse: comma-separated, each item trimmed; blank text is the empty list."""
    if not value.strip():
        return []
    return [item.strip() for item in value.split(",")]


def parse_subscription(name: str, config: Mapping[str, str]) -> ClientMetricsSubscription:
    """The subscription ``name`` with ``config`` (the keys it sets; the others default). Raises
    ``InvalidSubscriptionError`` as Kafka's ``ClientMetricsConfigs.validate`` does."""
    if not name:
        raise InvalidSubscriptionError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    unknown = sorted(set(config) - set(CONFIG_DEFAULTS))
    if unknown:
        raise InvalidSubscriptionError(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {unknown[0]}")
    text = config.get(INTERVAL_MS, str(DEFAULT_INTERVAL_MS))
    try:
        interval = int(text.strip())
    except ValueError:
        raise InvalidSubscriptionError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {text} for configuration {INTERVAL_MS}: Not a number of type INT"
        ) from None
    if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
        raise InvalidSubscriptionError(
            ErrorCode.INVALID_REQUEST,
            f"Invalid value {interval} for {INTERVAL_MS}, interval must be between 100 and 3600000 (1 hour)",
        )
    match = []
    for pattern in _list(config.get(MATCH, "")):
        parts = pattern.split("=")
        attribute = parts[0].strip()
        if len(parts) != 2 or attribute not in MATCH_ATTRIBUTES:
            raise InvalidSubscriptionError(ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        try:
            match.append((attribute, re.compile(parts[1].strip())))
        except re.error:
            raise InvalidSubscriptionError(
                ErrorCode.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}"
            ) from None
    by_attribute = dict(match)  # a later pattern for the same attribute replaces the earlier one, as Kafka's map
    return ClientMetricsSubscription(
        name, tuple(dict.fromkeys(_list(config.get(METRICS, "")))), interval, tuple(sorted(by_attribute.items()))
    )


def resolve(
    subscriptions: Iterable[ClientMetricsSubscription], client: ClientInstanceMetadata, instance_id: uuid.UUID
) -> ResolvedSubscription:
    """The subscription of ``client`` (whose id is ``instance_id``) under every subscription there is."""
    metrics: dict[str, None] = {}  # insertion-ordered set
    interval = DEFAULT_INTERVAL_MS
    all_metrics = False
    for sub in sorted(subscriptions, key=lambda s: s.name):
        if client.matches(sub):
            all_metrics = all_metrics or ALL_METRICS in sub.metrics
            metrics.update(dict.fromkeys(java_hash_set_copy_order(sub.metrics)))
            interval = min(interval, sub.interval_ms)
    ordered = (ALL_METRICS,) if all_metrics else java_hash_set_order(metrics)
    return ResolvedSubscription(ordered, interval, subscription_id(ordered, interval, instance_id))


def subscription_id(metrics: Iterable[str], interval_ms: int, instance_id: uuid.UUID) -> int:
    """Kafka's ``computeSubscriptionId``: CRC-32C of ``"[m1, m2]" + str(interval_ms)`` (the prefixes in the order
    given: ``java_hash_set_order`` for Kafka's) XOR ``java_uuid_hash(instance_id)``, as a signed 32-bit int."""
    text = "[" + ", ".join(metrics) + "]" + str(interval_ms)
    value = (crc32c(text.encode("utf-8")) ^ java_uuid_hash(instance_id)) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_uuid_hash(value: uuid.UUID) -> int:
    """Kafka's ``Uuid.hashCode``: the two 64-bit halves XORed, then its two 32-bit halves XORed (unsigned here)."""
    h = (value.int >> 64) ^ (value.int & 0xFFFF_FFFF_FFFF_FFFF)
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units (unsigned 32-bit)."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def _bucket_order(names: list[str], size: int) -> tuple[str, ...]:
    def bucket(name: str) -> int:
        h = java_string_hash(name)
        return (h ^ (h >> 16)) & (size - 1)

    return tuple(sorted(names, key=bucket))  # stable: insertion order within a bucket


def java_hash_set_copy_order(items: Iterable[str]) -> tuple[str, ...]:
    """The order of ``new HashSet<>(list)`` (Kafka's ``SubscriptionInfo.metrics``): a table of
    ``tableSizeFor(max(n / 0.75 + 1, 16))`` buckets, filled in list order."""
    names = list(dict.fromkeys(items))
    wanted = max(int(len(names) / 0.75) + 1, 16)
    size = 1
    while size < wanted:
        size *= 2
    return _bucket_order(names, size)


def java_hash_set_order(items: Iterable[str]) -> tuple[str, ...]:
    """The order a ``java.util.HashSet`` filled with these strings in this order iterates in: by bucket (the
    spread hash ``h ^ (h >>> 16)`` masked by the table size: 16, doubled while more than 3/4 full), then in
    insertion order."""
    names = list(dict.fromkeys(items))
    size = 16
    while len(names) > size * 3 // 4:
        size *= 2
    return _bucket_order(names, size)
