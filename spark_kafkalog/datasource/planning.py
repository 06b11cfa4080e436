"""Offset-range planning of a Kafka read: which partitions, from where to where, in how many pieces (pure).

The driver side of a batch read, as Spark's ``KafkaOffsetReaderAdmin`` and ``KafkaOffsetRangeCalculator``
do it, written against ``OffsetSource`` (the three cluster calls it needs; ``KafkaClient`` implements
them) so that it is unit-tested without a cluster:

1. ``resolve_partitions``: the subscribed/assigned topic-partitions that exist;
2. ``resolve_limit``: starting and ending limits (sentinels, JSON offsets, timestamps) to offsets;
3. ``plan_ranges``: one ``OffsetRange`` per partition, checked (start must not pass end);
4. ``ScanBounds.narrow``: pushed-down filters prune partitions and narrow ranges;
5. ``split_ranges``: ``minPartitions`` / ``maxRecordsPerPartition`` splitting with Spark's rounding.

``plan_batch`` runs them in that order. As in Spark, ``earliest``/``latest`` (``EARLIEST``/``LATEST``)
stay unresolved in the ranges and each read task resolves them when it runs (``split_late_bound``), so an
action re-run on the same DataFrame (whose plan Spark 4.3 caches) sees the records that arrived since;
``minPartitions`` / ``maxRecordsPerPartition`` resolve them on the driver to size the pieces and keep them
on the outer pieces. Plans with pushed-down filters resolve every offset at planning. A streaming reader
reuses steps 3-5 with offsets from its checkpointed JSON (``offsets``). Functions are stateless;
``OffsetRange`` is immutable and picklable.
"""

from __future__ import annotations

import difflib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from spark_kafkalog.datasource.offsets import (
    EARLIEST,
    LATEST,
    EarliestLimit,
    GlobalTimestampLimit,
    LatestLimit,
    OffsetLimit,
    SpecificOffsetsLimit,
    SpecificTimestampsLimit,
    TimestampStrategy,
    TopicPartition,
)
from spark_kafkalog.datasource.options import (
    Assign,
    KafkaOptionError,
    SourceOptions,
    Subscribe,
    SubscribePattern,
    SubscriptionStrategy,
)

__all__ = [
    "DataLossError",
    "OffsetRange",
    "OffsetSource",
    "PlanningError",
    "ScanBounds",
    "UnknownTopicError",
    "check_range",
    "plan_batch",
    "plan_ranges",
    "resolve_limit",
    "resolve_partitions",
    "split_late_bound",
    "split_ranges",
]

log = logging.getLogger(__name__)

INT64_MAX = (1 << 63) - 1


class PlanningError(ValueError):
    """Offsets that cannot be planned (a start past its end, an unmatched starting timestamp, ...)."""


class DataLossError(RuntimeError):
    """Data may have been lost (``failOnDataLoss=true``); the message says how to continue without it."""


DATA_LOSS_HINT = (
    "Some data may have been lost because they are not available in Kafka any more; either the data was "
    "aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. "
    "If you want your query to continue (skipping the lost data) in such cases, set the source option "
    '"failOnDataLoss" to "false".'
)


def report_data_loss(message: str, fail_on_data_loss: bool) -> None:
    """Spark's ``reportDataLoss``: raise ``DataLossError`` or log a warning and go on."""
    if fail_on_data_loss:
        raise DataLossError(f"{message}. {DATA_LOSS_HINT}")
    log.warning("%s. Some data may have been lost; continuing because failOnDataLoss is false.", message)


class OffsetSource(Protocol):
    """What planning asks the cluster (``spark_kafkalog.client.KafkaClient`` provides all three)."""

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count."""

    def list_offsets(self, specs: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """ListOffsets: -2 log start, -1 high watermark (last stable offset under read_committed)."""

    def list_offsets_with_timestamps(
        self, specs: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[int, int]]:
        """ListOffsets by timestamp: (first offset with a timestamp >= spec, its timestamp); a timestamp
        of -1 means no record matched."""


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets ``[start, end)`` of one topic-partition (``end`` exclusive: the next offset to read)."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        """``end - start``: an upper bound of the records (compaction and markers leave gaps)."""
        return self.end - self.start

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}[{self.start}, {self.end})"


class UnknownTopicError(PlanningError):
    """A topic named by ``subscribe`` or ``assign`` does not exist (a batch read would silently be empty)."""


def _check_topics_exist(names, topics: Mapping[str, int], option: str) -> None:
    missing = [t for t in dict.fromkeys(names) if t not in topics]
    if not missing:
        return
    hints = []
    for name in missing:
        close = difflib.get_close_matches(name, [t for t in topics if not t.startswith("__")], n=1, cutoff=0.6)
        hints.append(f"'{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    raise UnknownTopicError(
        f"Topic(s) {', '.join(hints)} given in option '{option}' do not exist on the cluster; create them first "
        f'(e.g. kafkalog topics create --bootstrap-server <host:port> --topic {missing[0]}) or fix the name, e.g. .option("{option}", ...). '
        "A subscribePattern that matches no topic reads nothing instead, as in Spark."
    )


def resolve_partitions(
    strategy: SubscriptionStrategy,
    topics: Mapping[str, int],
    *,
    fail_on_data_loss: bool = True,
    require_topics: bool = False,
) -> list[TopicPartition]:
    """The topic-partitions to read, sorted. With ``require_topics`` (batch reads; streams, which retry it
    first) a subscribed or assigned topic that does not exist raises ``UnknownTopicError`` naming it, as
    Spark's admin-based offset reader fails; otherwise it contributes nothing. An assigned partition beyond an existing topic's partition
    count is data loss (error, or skipped with a warning). ``subscribePattern`` matching nothing is empty."""
    if require_topics and isinstance(strategy, Subscribe):
        _check_topics_exist(strategy.topics, topics, "subscribe")
    if require_topics and isinstance(strategy, Assign):
        _check_topics_exist([tp.topic for tp in strategy.partitions], topics, "assign")
    if isinstance(strategy, Subscribe):
        names = [t for t in strategy.topics if t in topics]
    elif isinstance(strategy, SubscribePattern):
        names = [t for t in topics if strategy.matches(t)]
    elif isinstance(strategy, Assign):
        found = []
        for tp in strategy.partitions:
            count = topics.get(tp.topic)
            if count is not None and tp.partition < count:
                found.append(tp)
                continue
            where = (
                f"topic {tp.topic!r} does not exist" if count is None else f"topic {tp.topic!r} has {count} partitions"
            )
            report_data_loss(f"Assigned partition {tp} does not exist ({where})", fail_on_data_loss)
        return sorted(found)
    else:  # pragma: no cover - the options parser only builds the three strategies
        raise TypeError(f"unknown subscription strategy {strategy!r}")
    return sorted(TopicPartition(t, p) for t in names for p in range(topics[t]))


def _check_covers(limit: OffsetLimit, partitions: Sequence[TopicPartition], role: str) -> None:
    """Spark's rule: specific offsets or timestamps name exactly the partitions read (a topic-level entry
    names every partition of its topic)."""
    if isinstance(limit, SpecificOffsetsLimit):
        option, given = f"{role}Offsets", limit.named(partitions)
        unknown = limit.missing_topics(partitions)
        if unknown:
            raise KafkaOptionError(
                f"Option '{option}' names topic(s) {unknown} that are not read (not subscribed, or without "
                f'partitions); give offsets only for the topics read, e.g. {{"t":"earliest"}}. Read: '
                f"{sorted(map(str, partitions))}"
            )
    elif isinstance(limit, SpecificTimestampsLimit):
        option, given = f"{role}OffsetsByTimestamp", set(limit.timestamps)
    else:
        return
    if given != set(partitions):
        raise KafkaOptionError(
            f"If '{option}' contains specific offsets, you must specify all TopicPartitions. Use -1 for latest, "
            f'-2 for earliest, e.g. {{"t":{{"0":23,"1":-2}}}}. Specified: {sorted(map(str, given))} '
            f"Assigned: {sorted(map(str, partitions))}"
        )


def offsets_for_times(
    source: OffsetSource, timestamps: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int | None]:
    """First offset with a timestamp >= the given one per partition; ``None`` when no record matched."""
    if not timestamps:
        return {}
    found = source.list_offsets_with_timestamps(dict(timestamps))
    out: dict[TopicPartition, int | None] = {}
    for tp in timestamps:
        offset, ts = found[tp]
        out[tp] = offset if offset >= 0 and ts >= 0 else None
    return out


def resolve_limit(
    limit: OffsetLimit,
    partitions: Sequence[TopicPartition],
    source: OffsetSource,
    *,
    role: str,
    keep_sentinels: bool = False,
) -> dict[TopicPartition, int]:
    """Offsets for ``limit`` (``role`` "starting" or "ending") with every sentinel resolved, or, with
    ``keep_sentinels``, with ``EARLIEST``/``LATEST`` left for the read task to resolve (Spark's late binding).

    Timestamps without a matching record resolve to the high watermark, except a starting timestamp
    with strategy ``error``, which raises ``PlanningError`` as Spark does.
    """
    if not partitions:
        return {}
    if isinstance(limit, (EarliestLimit, LatestLimit)):
        sentinel = EARLIEST if isinstance(limit, EarliestLimit) else LATEST
        if keep_sentinels:
            return {tp: sentinel for tp in partitions}
        return source.list_offsets({tp: sentinel for tp in partitions})
    if isinstance(limit, SpecificOffsetsLimit):
        _check_covers(limit, partitions, role)
        offsets = limit.for_partitions(partitions)
        sentinels = {tp: o for tp, o in offsets.items() if o < 0}
        if sentinels and not keep_sentinels:
            offsets.update(source.list_offsets(sentinels))
        return offsets
    if isinstance(limit, SpecificTimestampsLimit):
        _check_covers(limit, partitions, role)
        timestamps = {tp: limit.timestamps[tp] for tp in partitions}
    elif isinstance(limit, GlobalTimestampLimit):
        timestamps = {tp: limit.timestamp for tp in partitions}
    else:  # pragma: no cover
        raise TypeError(f"unknown offset limit {limit!r}")
    found = offsets_for_times(source, timestamps)
    missing = [tp for tp, offset in found.items() if offset is None]
    if missing and role == "starting" and limit.strategy == TimestampStrategy.ERROR:
        tp = missing[0]
        raise PlanningError(
            f"No offset matched from request of topic-partition {tp} and timestamp {timestamps[tp]}: no record "
            "has a timestamp at or after it. Set the option 'startingOffsetsByTimestampStrategy' to 'latest' "
            "to start from the latest offset in that case."
        )
    latest = source.list_offsets({tp: LATEST for tp in missing}) if missing else {}
    return {tp: latest[tp] if offset is None else offset for tp, offset in found.items()}


def plan_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> list[OffsetRange]:
    """One range per partition, sorted; empty ranges are kept (``split_ranges`` drops them). Both maps must
    name the same partitions; a start past its end raises ``PlanningError`` (checked here when both are
    offsets, by ``check_range`` in the task when a sentinel was left unresolved)."""
    if set(start) != set(end):
        raise PlanningError(
            f"different topic partitions for starting offsets topics{sorted(map(str, start))} and ending offsets "
            f"topics{sorted(map(str, end))}"
        )
    ranges = []
    for tp in sorted(start):
        s, e = start[tp], end[tp]
        if s >= 0 and e >= 0:
            check_range(tp, s, e)
        ranges.append(OffsetRange(tp.topic, tp.partition, s, e))
    return ranges


def check_range(tp: TopicPartition, start: int, end: int) -> None:
    """Spark's check of a resolved range: the start must not pass the end."""
    if start > end:
        raise PlanningError(
            f"Beginning offset {start} is after the ending offset {end} for topic {tp.topic} partition "
            f"{tp.partition}. You either provided an invalid fromOffset, or the Kafka topic has been damaged"
        )


def _is_bound(r: OffsetRange) -> bool:
    return r.start >= 0 and r.end >= 0


def split_late_bound(
    ranges: Sequence[OffsetRange],
    source: OffsetSource,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """``split_ranges`` for ranges that may keep ``EARLIEST``/``LATEST`` sentinels (late binding).

    Without splitting options every range stays whole, sentinels included (only bound empty ranges are
    dropped), so each read task resolves them when it runs. With them, the sentinels are resolved here to
    size the pieces, as Spark does, and the first piece of a partition keeps the start sentinel and the
    last piece the end sentinel; a partition that is empty now keeps one unresolved range.
    """
    if min_partitions is None and max_records_per_partition is None:
        return [r for r in ranges if not _is_bound(r) or r.size > 0]
    specs = {r.topic_partition: EARLIEST for r in ranges if r.start == EARLIEST}
    found_start = source.list_offsets(specs) if specs else {}
    specs = {r.topic_partition: LATEST for r in ranges if r.end == LATEST}
    found_end = source.list_offsets(specs) if specs else {}
    original = {r.topic_partition: r for r in ranges}
    bound = []
    for r in ranges:
        tp = r.topic_partition
        start, end = found_start.get(tp, r.start), found_end.get(tp, r.end)
        check_range(tp, start, end)
        bound.append(OffsetRange(r.topic, r.partition, start, end))
    pieces = split_ranges(bound, min_partitions, max_records_per_partition)
    first: dict[TopicPartition, int] = {}
    last: dict[TopicPartition, int] = {}
    for i, piece in enumerate(pieces):
        first.setdefault(piece.topic_partition, i)
        last[piece.topic_partition] = i
    out = list(pieces)
    for tp, i in first.items():
        if original[tp].start < 0:
            out[i] = OffsetRange(tp.topic, tp.partition, original[tp].start, out[i].end)
    for tp, i in last.items():
        if original[tp].end < 0:
            out[i] = OffsetRange(tp.topic, tp.partition, out[i].start, original[tp].end)
    out.extend(r for tp, r in original.items() if tp not in first and not _is_bound(r))
    return out


def _round_half_up(x: float) -> int:
    """Scala's ``math.round`` (half up); Python's ``round`` rounds half to even."""
    return math.floor(x + 0.5)


def _part_count(size: int, total: int, min_parts: int) -> int:
    return max(_round_half_up(size / total * min_parts), 1)


def _divide(r: OffsetRange, parts: int) -> list[OffsetRange]:
    """``parts`` contiguous pieces; integer division, the remainder goes to the later pieces."""
    pieces = []
    remaining = r.size
    start = r.start
    for i in range(parts):
        this = remaining // (parts - i)
        remaining -= this
        end = min(start + this, r.end)
        pieces.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return [p for p in pieces if p.size > 0]


def split_ranges(
    ranges: Sequence[OffsetRange], min_partitions: int | None = None, max_records_per_partition: int | None = None
) -> list[OffsetRange]:
    """Spark's ``KafkaOffsetRangeCalculator.getRanges``.

    Empty ranges are dropped. Ranges larger than ``max_records_per_partition`` are first cut into
    ``ceil(size / max)`` equal pieces; then, while fewer pieces than ``min_partitions`` exist, the large
    ones are split in proportion to their size (SPARK-36576): a piece is left whole when
    ``max(round(size / total * minPartitions), 1) == 1``, the others get
    ``max(round(size / splitTotal * max(minPartitions - #whole, 1)), 1)`` parts, rounding half up.
    """
    pieces = [r for r in ranges if r.size > 0]
    if max_records_per_partition is not None:
        pieces = [p for r in pieces for p in _divide(r, -(-r.size // max_records_per_partition))]
    if min_partitions is None or len(pieces) >= min_partitions:
        return pieces
    total = sum(r.size for r in pieces)
    whole = [_part_count(r.size, total, min_partitions) == 1 for r in pieces]
    whole_size = sum(r.size for r, w in zip(pieces, whole) if w)
    split_total = total - whole_size
    split_min = max(min_partitions - sum(whole), 1)
    out: list[OffsetRange] = []
    for r, w in zip(pieces, whole):
        out.extend([r] if w else _divide(r, _part_count(r.size, split_total, split_min)))
    return out


@dataclass(frozen=True)
class ScanBounds:
    """What pushed-down filters allow: topics, partitions (a set and/or ``[partition_min, partition_end)``),
    offsets ``[offset_min, offset_end)`` and a lower timestamp bound (ms, inclusive). ``None`` means no
    constraint. Built by the source from Spark's filters; immutable."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    partition_min: int = 0
    partition_end: int = INT64_MAX
    offset_min: int = 0
    offset_end: int = INT64_MAX
    timestamp_min: int | None = None

    @property
    def is_empty(self) -> bool:
        """No record can pass (e.g. ``offset > 5 AND offset < 3`` or ``partition IN ()``)."""
        return (
            self.offset_min >= self.offset_end
            or self.partition_min >= self.partition_end
            or (self.topics is not None and not self.topics)
            or (self.partitions is not None and not self.partitions)
        )

    def allows(self, tp: TopicPartition) -> bool:
        return (
            (self.topics is None or tp.topic in self.topics)
            and (self.partitions is None or tp.partition in self.partitions)
            and self.partition_min <= tp.partition < self.partition_end
        )

    def narrow(
        self, ranges: Sequence[OffsetRange], start_for_timestamp: Mapping[TopicPartition, int | None] | None = None
    ) -> list[OffsetRange]:
        """Ranges clipped to the offset bounds and, when given, started at the first offset whose timestamp
        is >= ``timestamp_min`` (``None``: no record that late, so the range becomes empty). Records before
        that offset all have earlier timestamps (ListOffsets semantics), so no matching record is lost."""
        out = []
        for r in ranges:
            start = max(r.start, self.offset_min)
            end = min(r.end, self.offset_end)
            if start_for_timestamp is not None:
                first = start_for_timestamp.get(r.topic_partition)
                start = end if first is None else max(start, first)
            out.append(OffsetRange(r.topic, r.partition, start, max(start, end)))
        return out


def plan_batch(options: SourceOptions, source: OffsetSource, bounds: ScanBounds | None = None) -> list[OffsetRange]:
    """The offset ranges of a batch read, one per Spark partition (see the module docstring)."""
    if bounds is not None and bounds.is_empty:
        return []
    partitions = resolve_partitions(
        options.strategy, source.topics(), fail_on_data_loss=options.fail_on_data_loss, require_topics=True
    )
    starting, ending = options.starting, options.ending
    if isinstance(options.strategy, Assign):
        # The JSON named every assigned partition (checked at parse); drop those that vanished.
        starting, ending = _restricted(starting, partitions), _restricted(ending, partitions)
    if bounds is not None:
        # Check the JSON against the whole subscription before pruning, as an unfiltered read would.
        _check_covers(starting, partitions, "starting")
        _check_covers(ending, partitions, "ending")
        partitions = [tp for tp in partitions if bounds.allows(tp)]
        starting, ending = _restricted(starting, partitions), _restricted(ending, partitions)
    late = bounds is None  # pushed-down bounds narrow real offsets: those plans resolve everything here
    start = resolve_limit(starting, partitions, source, role="starting", keep_sentinels=late)
    end = resolve_limit(ending, partitions, source, role="ending", keep_sentinels=late)
    ranges = plan_ranges(start, end)
    if late:
        return split_late_bound(ranges, source, options.min_partitions, options.max_records_per_partition)
    if bounds is not None:
        by_time = None
        if bounds.timestamp_min is not None:
            live = [r.topic_partition for r in ranges if r.size > 0]
            by_time = offsets_for_times(source, {tp: bounds.timestamp_min for tp in live})
        ranges = bounds.narrow(ranges, by_time)
    return split_ranges(ranges, options.min_partitions, options.max_records_per_partition)


def _restricted(limit: OffsetLimit, partitions: Sequence[TopicPartition]) -> OffsetLimit:
    """``limit`` limited to ``partitions`` (assigned partitions vanished, or pushdown pruned some)."""
    keep = set(partitions)
    if isinstance(limit, SpecificOffsetsLimit):
        return limit.restricted(keep)
    if isinstance(limit, SpecificTimestampsLimit):
        return SpecificTimestampsLimit({tp: t for tp, t in limit.timestamps.items() if tp in keep}, limit.strategy)
    return limit
