"""Options of ``readStream`` in share-group read mode (``shareGroup``, KIP-932) (pure: no pyspark, no I/O).

``parse_share_stream_options(mapping)`` validates a streaming read whose options hold ``shareGroup``:

- ``shareGroup`` (required, not blank): the share group the query's driver joins as its one member;
- ``subscribe`` (required): the topics; ``assign`` and ``subscribePattern`` are refused (a share group
  subscribes to topic names and the group assigns partitions);
- ``maxRecordsPerTrigger`` (default ``10000``): most records one micro-batch acquires;
- ``shareMaxWaitMs`` (default ``500``): how long ``latestOffset`` waits for records before it reports
  that no new batch is due (0: no wait);
- ``shareAcknowledgeTimeoutMs`` (default ``30000``): how long the driver waits for the broker to answer
  a batch's acknowledgements;
- refused with a message saying what to do instead: the starting limits (where a share group starts is
  its ``share.auto.offset.reset`` group config), the per-trigger offset/byte limits and
  ``maxTriggerDelay`` (offsets of a share batch are what the broker hands out, not a range to prorate),
  ``minPartitions`` / ``maxRecordsPerPartition`` (one task per topic-partition),
  ``commitOffsetsToGroup`` and ``kafka.group.id`` (the group is ``shareGroup``), the ending limits and the
  ``kafka.*`` settings a share consumer refuses (``isolation.level``, ``session.timeout.ms``, ...: the group's
  configs decide);
- everything else (``kafka.*`` client settings, ``failOnDataLoss``, ``includeHeaders``,
  ``kafkaConsumer.pollTimeoutMs``, key/value formats) as a batch read: ``parse_source_options``.

The share-only options without ``shareGroup`` are refused by ``parse_stream_options`` through
``check_no_share_options``. ``ShareStreamOptions`` is immutable and picklable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from spark_kafkalog.datasource.options import (
    KafkaOptionError,
    SourceOptions,
    Subscribe,
    _lower,
    _positive_int,
    parse_source_options,
)

__all__ = [
    "DEFAULT_SHARE_ACK_TIMEOUT_MS",
    "DEFAULT_SHARE_MAX_RECORDS",
    "DEFAULT_SHARE_MAX_WAIT_MS",
    "SHARE_GROUP",
    "SHARE_ONLY_OPTIONS",
    "ShareStreamOptions",
    "check_no_share_options",
    "is_share_read",
    "parse_share_stream_options",
]

SHARE_GROUP = "shareGroup"
SHARE_ONLY_OPTIONS = ("maxRecordsPerTrigger", "shareMaxWaitMs", "shareAcknowledgeTimeoutMs")
DEFAULT_SHARE_MAX_RECORDS = 10_000
DEFAULT_SHARE_MAX_WAIT_MS = 500
DEFAULT_SHARE_ACK_TIMEOUT_MS = 30_000

_START_HINT = (
    "a share group starts where its group config share.auto.offset.reset says (latest by default) and "
    "remembers its progress itself; set it with e.g. `kafkalog configs --entity-type groups --entity-name "
    "<group> --alter --add-config share.auto.offset.reset=earliest`"
)
_REFUSED = {
    "startingOffsets": _START_HINT,
    "startingOffsetsByTimestamp": _START_HINT,
    "startingTimestamp": _START_HINT,
    "startingOffsetsByTimestampStrategy": _START_HINT,
    "endingOffsets": "a stream reads until it is stopped",
    "endingOffsetsByTimestamp": "a stream reads until it is stopped",
    "endingTimestamp": "a stream reads until it is stopped",
    "maxOffsetsPerTrigger": 'bound a share batch with .option("maxRecordsPerTrigger", "10000") instead',
    "minOffsetsPerTrigger": 'a share batch takes what the broker hands out; bound it with .option("maxRecordsPerTrigger", ...)',
    "maxTriggerDelay": 'a share batch takes what the broker hands out; wait for records with .option("shareMaxWaitMs", "500")',
    "maxBytesPerTrigger": 'bound a share batch with .option("maxRecordsPerTrigger", "10000") instead',
    "minPartitions": "a share batch is read with one task per topic-partition",
    "maxRecordsPerPartition": "a share batch is read with one task per topic-partition",
    "commitOffsetsToGroup": "the share group keeps the query's progress itself (`kafkalog groups describe`)",
    "kafka.group.id": "the group is the shareGroup option",
    "kafka.isolation.level": "the share group's config share.isolation.level decides which records it hands out",
    "kafka.session.timeout.ms": "the share group's config share.session.timeout.ms decides",
    "kafka.heartbeat.interval.ms": "the share group's config share.heartbeat.interval.ms decides",
    "kafka.group.instance.id": "share groups have no static members",
    "kafka.group.protocol": "the driver always uses the share group protocol",
    "kafka.group.remote.assignor": "the share group coordinator assigns partitions",
    "kafka.partition.assignment.strategy": "the share group coordinator assigns partitions",
    "kafka.share.acknowledgement.mode": "the driver acknowledges each finished micro-batch explicitly",
    "assign": 'a share group subscribes to topic names: use .option("subscribe", "topicA,topicB")',
    "subscribePattern": 'a share group subscribes to topic names: use .option("subscribe", "topicA,topicB")',
}


@dataclass(frozen=True)
class ShareStreamOptions:
    """Validated share-group streaming-read settings; ``source`` is what the tasks read with (its
    ``strategy`` is the ``Subscribe`` of the topics, its ``starting``/``ending`` unused)."""

    source: SourceOptions
    group_id: str
    max_records_per_trigger: int = DEFAULT_SHARE_MAX_RECORDS
    max_wait_ms: int = DEFAULT_SHARE_MAX_WAIT_MS
    acknowledge_timeout_ms: int = DEFAULT_SHARE_ACK_TIMEOUT_MS

    @property
    def topics(self) -> tuple[str, ...]:
        assert isinstance(self.source.strategy, Subscribe)
        return self.source.strategy.topics


def is_share_read(options: Mapping[str, str]) -> bool:
    """Whether ``readStream`` options ask for the share-group read mode (``shareGroup`` given)."""
    return SHARE_GROUP.lower() in _lower(options)


def check_no_share_options(opts: Mapping[str, str]) -> None:
    """Refuse the share-only options in a stream without ``shareGroup`` (``opts``: lower-case keys)."""
    for name in SHARE_ONLY_OPTIONS:
        if name.lower() in opts:
            hint = (
                'bound a micro-batch with .option("maxOffsetsPerTrigger", "10000")'
                if name == "maxRecordsPerTrigger"
                else "remove it"
            )
            raise KafkaOptionError(
                f"Option '{name}' applies only to share-group reads: set "
                f'.option("{SHARE_GROUP}", "<group>") to read as a member of a share group, or {hint}'
            )


def parse_share_stream_options(options: Mapping[str, str]) -> ShareStreamOptions:
    """Validated share-group ``readStream`` settings (see the module docstring); raises ``KafkaOptionError``."""
    opts = _lower(options)
    group = (opts.pop(SHARE_GROUP.lower(), None) or "").strip()
    if not group:
        raise KafkaOptionError(
            f"Option '{SHARE_GROUP}' is empty; give the share group the query reads as, e.g. "
            f'.option("{SHARE_GROUP}", "orders-workers")'
        )
    for name, reason in _REFUSED.items():
        if name.lower() in opts:
            raise KafkaOptionError(f"Option '{name}' cannot be used with '{SHARE_GROUP}': {reason}")
    if "subscribe" not in opts:
        raise KafkaOptionError(
            f"Option 'subscribe' must be specified with '{SHARE_GROUP}': the topics the share group reads, "
            'e.g. .option("subscribe", "topicA,topicB")'
        )
    max_records = _positive_int(opts, "maxRecordsPerTrigger", "10000")
    max_wait = _positive_int(opts, "shareMaxWaitMs", "500", allow_zero=True)
    ack_timeout = _positive_int(opts, "shareAcknowledgeTimeoutMs", "30000")
    source = parse_source_options({k: v for k, v in opts.items() if k not in _SHARE_ONLY_LOWER})
    return ShareStreamOptions(
        source=source,
        group_id=group,
        max_records_per_trigger=DEFAULT_SHARE_MAX_RECORDS if max_records is None else max_records,
        max_wait_ms=DEFAULT_SHARE_MAX_WAIT_MS if max_wait is None else max_wait,
        acknowledge_timeout_ms=DEFAULT_SHARE_ACK_TIMEOUT_MS if ack_timeout is None else ack_timeout,
    )


_SHARE_ONLY_LOWER = frozenset(name.lower() for name in SHARE_ONLY_OPTIONS)
