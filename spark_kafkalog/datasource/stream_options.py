"""Options of ``readStream`` / ``writeStream`` with ``format("kafkalog")`` (pure: no pyspark, no I/O).

``parse_stream_options(mapping)`` validates a streaming read: every batch-read option of ``options`` with
Spark's streaming rules on top (``KafkaSourceProvider.validateStreamOptions``):

- ``startingOffsets`` defaults to ``latest`` and may be ``latest`` or hold ``-1``;
- ``endingOffsets`` ("ending offset not valid in streaming queries") and ``endingOffsetsByTimestamp``
  ("ending timestamp not valid in streaming queries") are refused with Spark's messages; ``endingTimestamp``
  is accepted and ignored with a warning, as Spark ignores it in streams;
- admission control: ``maxOffsetsPerTrigger``, ``minOffsetsPerTrigger`` (<= max) with ``maxTriggerDelay``
  (Spark's time strings: ``us``, ``ms``, ``s``, ``m``/``min``, ``h``, ``d``; a bare number is
  milliseconds; default ``15m``) and, beyond Spark, ``maxBytesPerTrigger``;
- beyond Spark: ``commitOffsetsToGroup`` (a group id) makes each finished batch commit its end offsets
  to that consumer group; ``kafka.group.id`` does the same when ``commitOffsetsToGroup`` is not given.

``parse_stream_sink_options(mapping)`` is ``parse_sink_options`` after dropping the options Spark adds to
every streaming sink (``checkpointLocation``, ``queryName``, ``path``, the async progress tracking options).
Async progress tracking (``asyncProgressTrackingEnabled``) writes the offset log in the background, so a
restart may plan a batch id again with other offsets: an at-least-once sink takes it, as Spark's Kafka sink
does; ``exactlyOnce`` (whose per-batch markers assume a batch id always means the same offsets) refuses it.
Results are immutable and picklable.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from spark_kafkalog.datasource.offsets import LatestLimit, TimestampStrategy
from spark_kafkalog.datasource.options import (
    _SINK_OPTIONS,
    _SOURCE_OPTIONS,
    Assign,
    KafkaOptionError,
    SinkOptions,
    SourceOptions,
    _check_known,
    _check_partitions_match,
    _limit,
    _lower,
    _positive_int,
    parse_sink_options,
    parse_source_options,
)
from spark_kafkalog.datasource.share_options import check_no_share_options

__all__ = [
    "DEFAULT_MAX_TRIGGER_DELAY_MS",
    "STREAM_SINK_SPARK_OPTIONS",
    "StreamOptions",
    "parse_duration_ms",
    "parse_stream_options",
    "parse_stream_sink_options",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000  # Spark's "15m"

_ENDING = ("endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp")
_ENDING_REFUSED = {
    "endingOffsets": "ending offset not valid in streaming queries",
    "endingOffsetsByTimestamp": "ending timestamp not valid in streaming queries",
}
_STARTING = ("startingOffsets", "startingOffsetsByTimestamp", "startingTimestamp")
_STREAM_EXTRAS = ("maxBytesPerTrigger", "commitOffsetsToGroup")
_STREAM_OPTIONS = tuple(o for o in _SOURCE_OPTIONS if o not in _ENDING) + _STREAM_EXTRAS

ASYNC_PROGRESS_TRACKING = "asyncProgressTrackingEnabled"
STREAM_SINK_SPARK_OPTIONS = (
    "checkpointLocation",
    "queryName",
    "path",
    ASYNC_PROGRESS_TRACKING,
    "asyncProgressTrackingCheckpointIntervalMs",
    "_asyncProgressTrackingOverrideSinkSupportCheck",
)
"""Options Spark itself passes to a streaming sink; accepted and ignored."""

_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


@dataclass(frozen=True)
class StreamOptions:
    """Validated streaming-read settings. ``source`` carries what a read task and the driver's client need
    (its ``starting`` is the stream's starting limit, its ``ending`` unused); the rest is admission control
    and the optional group to commit to."""

    source: SourceOptions
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS
    max_bytes_per_trigger: int | None = None
    commit_group: str | None = None

    @property
    def has_limits(self) -> bool:
        """Whether any option limits what a micro-batch takes."""
        return (
            self.max_offsets_per_trigger is not None
            or self.min_offsets_per_trigger is not None
            or self.max_bytes_per_trigger is not None
        )


def parse_duration_ms(text: str, option: str = "maxTriggerDelay") -> int:
    """Spark's ``Utils.timeStringAsMs``: ``"15m"`` -> 900000; a bare number is milliseconds."""
    match = re.fullmatch(r"\s*(\d+)\s*(us|ms|s|m|min|h|d)?\s*", text.lower())
    if match is None:
        raise KafkaOptionError(
            f"Invalid value '{text}' for option '{option}': expected a duration, e.g. \"15m\" or \"30s\""
        )
    return int(int(match.group(1)) * _UNITS_MS[match.group(2) or "ms"])


def parse_stream_options(options: Mapping[str, str]) -> StreamOptions:
    """Validated ``readStream`` settings (see the module docstring); raises ``KafkaOptionError``."""
    opts = _lower(options)
    for name, message in _ENDING_REFUSED.items():
        if name.lower() in opts:
            raise KafkaOptionError(
                f"Option '{name}': {message}; a stream reads until it is stopped. Remove it, or bound each "
                'micro-batch instead, e.g. .option("maxOffsetsPerTrigger", "10000")'
            )
    if opts.pop("endingtimestamp", None) is not None:
        log.warning("option 'endingTimestamp' is ignored in streaming queries (as by Spark): a stream has no end")
    check_no_share_options(opts)
    _check_known(opts, _STREAM_OPTIONS, "streaming reads", _SINK_OPTIONS)
    # Everything but the starting limit and the stream-only extras is a batch-read option.
    dropped = {name.lower() for name in _STARTING + _STREAM_EXTRAS}
    source = parse_source_options({k: v for k, v in opts.items() if k not in dropped})
    ts_strategy = (opts.get("startingoffsetsbytimestampstrategy") or TimestampStrategy.ERROR).strip().lower()
    starting = _limit(opts, "starting", LatestLimit(), ts_strategy)
    if isinstance(source.strategy, Assign):
        _check_partitions_match(source.strategy, starting, "starting")
    source = replace(source, starting=starting)
    delay = opts.get("maxtriggerdelay")
    group = opts.get("commitoffsetstogroup")
    if group is not None:
        group = group.strip()
        if not group:
            raise KafkaOptionError(
                "Option 'commitOffsetsToGroup' is empty; give the consumer group that should show the query's "
                'progress, e.g. .option("commitOffsetsToGroup", "orders-etl")'
            )
    else:
        group = (source.client_properties.get("group.id") or "").strip() or None
    return StreamOptions(
        source=source,
        max_offsets_per_trigger=_positive_int(opts, "maxOffsetsPerTrigger", "10000"),
        min_offsets_per_trigger=_positive_int(opts, "minOffsetsPerTrigger", "1000"),
        max_trigger_delay_ms=DEFAULT_MAX_TRIGGER_DELAY_MS if delay is None else parse_duration_ms(delay),
        max_bytes_per_trigger=_positive_int(opts, "maxBytesPerTrigger", "67108864"),
        commit_group=group,
    )


def parse_stream_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Validated ``writeStream`` settings: the batch sink's, Spark's own streaming options ignored. An
    exactly-once sink without ``kafka.transactional.id`` takes its prefix from ``checkpointLocation`` (stable
    across restarts of the query, distinct between queries)."""
    ignored = {name.lower() for name in STREAM_SINK_SPARK_OPTIONS}
    parsed = parse_sink_options({k: v for k, v in options.items() if str(k).lower() not in ignored})
    asynchronous = any(
        str(k).lower() == ASYNC_PROGRESS_TRACKING.lower() and str(v).strip().lower() == "true"
        for k, v in options.items()
    )
    if parsed.exactly_once and asynchronous:
        raise KafkaOptionError(
            "exactlyOnce cannot be used with asyncProgressTrackingEnabled: async progress tracking may run a "
            "micro-batch id again with other offsets after a restart, which the exactly-once markers would "
            'take as already written; remove one of them, e.g. .option("asyncProgressTrackingEnabled", "false")'
        )
    if parsed.exactly_once and parsed.transactional_id_prefix is None:
        checkpoint = next((v for k, v in options.items() if str(k).lower() == "checkpointlocation" and v), None)
        if checkpoint is None:
            raise KafkaOptionError(
                "exactlyOnce needs transactional ids that stay the same when the query restarts: set "
                '.option("checkpointLocation", ...) on the query or .option("kafka.transactional.id", "<prefix>")'
            )
        digest = hashlib.sha256(str(checkpoint).rstrip("/").encode()).hexdigest()[:16]
        parsed = replace(parsed, transactional_id_prefix=f"kafkalog-{digest}")
    return parsed
