"""Micro-batch planning of a streaming Kafka read, as Spark's ``KafkaMicroBatchStream`` does it (pure).

Offsets travel through Spark as the source's offset JSON, the same as Spark's Kafka source writes into a
checkpoint's ``offsets/<batch>`` files: ``{"topic":{"0":42,"1":17}}`` (the next offset to read per
partition, partition keys as strings, sorted by topic then partition number), plus each topic's id as an
entry Spark's parser reads as a topic without partitions (``"@topicId:topic:<id>":{}``, see ``topic_ids``).
``to_offset_json`` always produces the same order, because Spark decides "no new data" by comparing offset
JSON texts.

Topic ids: the planner records the id of every topic it lists (Metadata v10+; ``StreamSource.topic_ids``).
A topic whose id differs between a batch's start and its end was deleted and re-created: ``plan`` reports
it as data loss naming the topic (``DataLossError`` with ``failOnDataLoss``, even when the new topic's
offsets have passed the old ones, which Spark's connector cannot tell), or with ``failOnDataLoss=false``
logs a warning and reads the new topic from its earliest offsets. ``latest_offset`` rate-limits such a topic
from its earliest offsets too, and a re-created topic is never held back by ``minOffsetsPerTrigger``.

``StreamPlanner`` is the driver side. It talks to the cluster only through ``StreamSource`` (a
``KafkaClient`` behind ``KafkaStreamSource``, which asks Metadata only for the named topics; both in
``stream_cluster``, re-exported here), keeps the state Spark's stream keeps between calls, and is used by one
thread (PySpark's streaming source runner calls the reader sequentially in one Python process):

- ``partitions``: what the subscription reads now; a ``subscribe``d or ``assign``ed topic that does not
  exist is looked for ``fetchOffset.numRetries`` times, then fails the query (Spark's admin-based reader);
  a topic deleted between listing and ListOffsets is left out (``KafkaStreamSource.list_offsets``);
- ``initial_offsets``: the starting limit resolved once per reader (``latest`` by default);
- ``latest_offset(start, all_available)``: the end of the next micro-batch. Partitions missing from
  ``start`` (new partitions, topics newly matching ``subscribePattern``) begin at their earliest offset.
  Unless Spark passes ``ReadAllAvailable`` (``Trigger.Once``), the option limits apply:
  ``minOffsetsPerTrigger`` skips the batch (returns ``start``) until enough offsets are available or
  ``maxTriggerDelay`` has passed since the last batch (``should_delay``, Spark's ``delayBatch``);
  ``maxOffsetsPerTrigger`` is split over partitions by ``rate_limit`` (Spark's ``rateLimit``); and
  ``maxBytesPerTrigger`` by ``byte_limit`` over bytes estimated from the log (``bytes_per_offset``);
  with both, each partition takes the smaller end. No partition at all (every matching topic deleted)
  is no batch (SPARK-41375);
- ``prepare_available_now``: ``Trigger.AvailableNow`` takes one snapshot of the latest offsets, at the
  first ``latest_offset`` of the run (SPARK-53560: a re-run uncommitted batch is not checked against
  offsets taken after it was planned); later ends never pass it, the limits still apply (several
  batches), ``minOffsetsPerTrigger`` does not (it could hold back the last records forever);
- ``plan(start, end)``: under ``Trigger.AvailableNow`` the end is checked against the snapshot and the
  cluster (``check_available_now_end``, Spark's messages); then one ``OffsetRange`` per partition with
  Spark's data-loss rules (``plan_stream_ranges``), then ``split_ranges`` as for batch reads.

Byte estimate (``maxBytesPerTrigger``): before each limited batch, the driver fetches up to
``SAMPLE_BYTES`` of record batches at the start of every partition with a backlog and takes their
stored size (compressed, as in the log) per offset they cover; a partition whose sample fails keeps its
last estimate, or ``DEFAULT_BYTES_PER_OFFSET``. The limit is thus on log bytes, approximate to a batch,
and never stops a partition from advancing by at least one offset.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping

from spark_kafkalog.datasource.offsets import EARLIEST, LATEST, TopicPartition
from spark_kafkalog.datasource.planning import (
    OffsetRange,
    UnknownTopicError,
    report_data_loss,
    resolve_limit,
    resolve_partitions,
    split_ranges,
)
from spark_kafkalog.datasource.stream_cluster import KafkaStreamSource, StreamSource, named_topics
from spark_kafkalog.datasource.stream_options import StreamOptions
from spark_kafkalog.datasource.topic_ids import id_entries, is_id_key, offset_topic_ids, parse_id_key, recreated_topics

__all__ = [
    "AvailableNowError",
    "DEFAULT_BYTES_PER_OFFSET",
    "INT64_MAX",
    "KafkaStreamSource",
    "SAMPLE_BYTES",
    "StreamOffsetError",
    "StreamPlanner",
    "StreamSource",
    "byte_limit",
    "bytes_per_offset",
    "from_offset_json",
    "named_topics",
    "offset_topic_ids",
    "plan_stream_ranges",
    "rate_limit",
    "should_delay",
    "to_offset_json",
]

log = logging.getLogger(__name__)

INT64_MAX = (1 << 63) - 1
SAMPLE_BYTES = 256 * 1024
"""Bytes of record batches fetched per partition to estimate its bytes per offset."""
DEFAULT_BYTES_PER_OFFSET = 1024
"""Estimate for a partition that could not be sampled yet."""

CUSTOM_GROUP_ID_MESSAGE = (
    "A custom group id (kafka.group.id) is set: another consumer using the same group id may have "
    "interfered; with format 'kafkalog' the group id is only used to show the query's progress"
)


class StreamOffsetError(ValueError):
    """An offset from Spark (a checkpoint) that is not the source's offset JSON."""


class AvailableNowError(RuntimeError):
    """``Trigger.AvailableNow``'s target no longer holds (partitions or offsets gone meanwhile); the message
    is Spark's (``LOST_TOPIC_PARTITIONS_IN_END_OFFSET_WITH_TRIGGER_AVAILABLENOW`` and its siblings)."""


_TRANSIENT = "The error could be transient - restart your query, and report if you still see the same issue."


def _scala_set(offsets: Iterable[TopicPartition]) -> str:
    """Partitions as Spark's messages print a Scala ``Set``: ``Set(t-0, t-1)`` (sorted here)."""
    return "Set(" + ", ".join(str(tp) for tp in sorted(offsets)) + ")"


def _scala_map(offsets: Mapping[TopicPartition, int]) -> str:
    """Offsets as Spark's messages print a Scala ``Map``: ``Map(t-0 -> 10, t-1 -> 5)`` (sorted here)."""
    return "Map(" + ", ".join(f"{tp} -> {offsets[tp]}" for tp in sorted(offsets)) + ")"


def to_offset_json(
    offsets: Mapping[TopicPartition, int], topic_ids: Mapping[str, str] | None = None
) -> dict[str, dict[str, int]]:
    """``{TopicPartition("t", 0): 42}`` -> ``{"t": {"0": 42}}``, sorted by topic then partition number, then the
    id entries (``topic_ids.id_entries``) of the topics of ``offsets`` that ``topic_ids`` has."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    if topic_ids:
        out.update(id_entries({t: i for t, i in topic_ids.items() if t in out}))
    return out


def from_offset_json(value: object) -> dict[TopicPartition, int]:
    """The offsets of an offset JSON (the inverse of ``to_offset_json`` without the topic ids), checking the
    shape (a checkpoint may hold anything)."""
    if not isinstance(value, Mapping):
        raise StreamOffsetError(f'expected the kafkalog offset JSON {{"topic":{{"0":42}}}}, got {value!r}')
    if "shareGroup" in value and "acquired" in value:
        raise StreamOffsetError(
            f"the checkpoint was written by a share-group read (shareGroup {value['shareGroup']!r}); restart the "
            f'query with .option("shareGroup", {value["shareGroup"]!r}) or use a new checkpointLocation'
        )
    out: dict[TopicPartition, int] = {}
    for topic, partitions in value.items():
        if is_id_key(topic):
            if parse_id_key(topic) is None or partitions != {}:
                raise StreamOffsetError(
                    f"bad topic id entry {topic!r}: {partitions!r} in the offset JSON {value!r}; expected e.g. "
                    '"@topicId:topic:DNNw-hXqQCOW61shM7zZ2Q":{}'
                )
            continue
        if not isinstance(topic, str) or not isinstance(partitions, Mapping):
            raise StreamOffsetError(f'expected the kafkalog offset JSON {{"topic":{{"0":42}}}}, got {value!r}')
        for key, offset in partitions.items():
            try:
                partition = int(key)
            except (TypeError, ValueError):
                partition = -1
            if partition < 0 or isinstance(offset, bool) or not isinstance(offset, int):
                raise StreamOffsetError(
                    f"bad entry {key!r}: {offset!r} of topic {topic!r} in the offset JSON {value!r}; expected "
                    'e.g. {"topic":{"0":42}}'
                )
            out[TopicPartition(topic, partition)] = offset
    return out


def rate_limit(
    limit: int, begin: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """Spark's ``KafkaMicroBatchStream.rateLimit``: ``end`` limited to about ``limit`` offsets in all.

    Each partition with a backlog (``size = end - begin > 0``) gets ``limit * size / total`` offsets,
    rounded down, but up when below 1 (a small partition is never starved, so the sum may exceed
    ``limit`` by up to the number of partitions); the result never passes ``end`` (nor ``INT64_MAX``).
    Partitions without a backlog or without a known ``begin`` keep ``end``; below one offset of backlog
    in total, ``end`` is returned unchanged.
    """
    sizes = {tp: e - begin[tp] for tp, e in end.items() if tp in begin and e - begin[tp] > 0}
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(end)
    out = {}
    for tp, e in end.items():
        if tp not in sizes:
            out[tp] = e
            continue
        prorate = limit * (sizes[tp] / total)
        take = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        b = begin[tp]
        out[tp] = min(e, INT64_MAX if take > INT64_MAX - b else b + take)
    return out


def byte_limit(
    max_bytes: int,
    begin: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    per_offset: Mapping[TopicPartition, float],
) -> dict[TopicPartition, int]:
    """``rate_limit`` over bytes: each partition's backlog is ``size * per_offset[tp]`` bytes; the budget
    is shared in proportion to those, and each share turned back into offsets (down, but at least one)."""
    sizes = {tp: e - begin[tp] for tp, e in end.items() if tp in begin and e - begin[tp] > 0}
    weights = {tp: size * max(per_offset.get(tp, DEFAULT_BYTES_PER_OFFSET), 1e-9) for tp, size in sizes.items()}
    total = sum(weights.values())
    if total <= max_bytes:
        return dict(end)
    out = {}
    for tp, e in end.items():
        if tp not in sizes:
            out[tp] = e
            continue
        share = max_bytes * (weights[tp] / total)
        offsets = share / max(per_offset.get(tp, DEFAULT_BYTES_PER_OFFSET), 1e-9)
        take = max(math.floor(offsets), 1)
        b = begin[tp]
        out[tp] = min(e, INT64_MAX if take > INT64_MAX - b else b + take)
    return out


def bytes_per_offset(batches: Iterable[tuple[int, int, int]]) -> float | None:
    """Average stored bytes per offset of ``(base_offset, last_offset, size_in_bytes)`` batches."""
    offsets = nbytes = 0
    for base, last, size in batches:
        offsets += last - base + 1
        nbytes += size
    return nbytes / offsets if offsets > 0 else None


def should_delay(
    min_offsets: int,
    begin: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    now_ms: int,
    last_trigger_ms: int,
    max_delay_ms: int,
) -> bool:
    """Spark's ``delayBatch``: skip this trigger while fewer than ``min_offsets`` are available, unless
    ``max_delay_ms`` has passed since the last batch (the caller records ``now_ms`` when it fires)."""
    if now_ms - last_trigger_ms >= max_delay_ms:
        return False
    available = sum(max(e - begin.get(tp, 0), 0) for tp, e in end.items())
    return available < min_offsets


def plan_stream_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    earliest_of_new: Mapping[TopicPartition, int],
    *,
    fail_on_data_loss: bool,
    custom_group: bool = False,
) -> list[OffsetRange]:
    """Spark's ``getOffsetRangesFromResolvedOffsets``: one range per partition of ``end``.

    ``earliest_of_new`` holds the log start offsets of partitions in ``end`` but not in ``start``. Data
    loss (``DataLossError``, or a warning with ``fail_on_data_loss=False``): a new partition whose
    earliest offset is unknown (deleted meanwhile) or not 0 (records were removed before the stream saw
    them); a partition of ``start`` missing from ``end`` (its topic was deleted); an end below its start
    (the topic was deleted and recreated, or truncated): that range is dropped and the next batch
    continues from the new end. Empty ranges are kept (``split_ranges`` drops them).
    """
    new = set(end) - set(start)
    unknown = sorted(new - set(earliest_of_new))
    if unknown:
        report_data_loss(
            f"Cannot find earliest offsets of {[str(tp) for tp in unknown]}. Some data may have been missed",
            fail_on_data_loss,
        )
    for tp in sorted(new & set(earliest_of_new)):
        if earliest_of_new[tp] != 0:
            report_data_loss(
                f"Added partition {tp} starts from {earliest_of_new[tp]} instead of 0. Some data may have been missed",
                fail_on_data_loss,
            )
    gone = sorted(set(start) - set(end))
    if gone:
        why = CUSTOM_GROUP_ID_MESSAGE if custom_group else "Some data may have been missed"
        report_data_loss(f"{[str(tp) for tp in gone]} are gone. {why}", fail_on_data_loss)
    ranges = []
    for tp in sorted(end):
        begin = start.get(tp, earliest_of_new.get(tp))
        if begin is None:
            continue
        until = end[tp]
        if until < begin:
            report_data_loss(
                f"Partition {tp}'s offset was changed from {begin} to {until}, some data may have been missed",
                fail_on_data_loss,
            )
            continue
        ranges.append(OffsetRange(tp.topic, tp.partition, begin, until))
    return ranges


class StreamPlanner:
    """The driver's state and decisions for one streaming read (see the module docstring)."""

    def __init__(
        self,
        options: StreamOptions,
        source: StreamSource,
        *,
        clock_ms: Callable[[], int] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.options = options
        self.source = source
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._sleep = sleep
        self._initial: dict[TopicPartition, int] | None = None
        self._available_now_mode = False
        self._available_now: dict[TopicPartition, int] | None = None
        self._last_trigger_ms = 0
        self._per_offset: dict[TopicPartition, float] = {}
        self._initial_ids: dict[str, str] = {}
        self._available_now_ids: dict[str, str] = {}
        self.latest: dict[TopicPartition, int] | None = None
        """The latest offsets seen by the last ``latest_offset`` call (Spark's progress shows them)."""
        self.topic_ids: dict[str, str] = {}
        """Topic name -> id of the topics the last ``partitions`` call listed (those with an id)."""
        self.end_topic_ids: dict[str, str] = {}
        """The topic ids that go with the offsets the last ``latest_offset`` call returned."""

    # -- offsets of the cluster ------------------------------------------------------------------
    def partitions(self) -> list[TopicPartition]:
        """The subscribed/assigned topic-partitions that exist now. A topic ``subscribe`` or ``assign`` names
        that does not exist is looked for ``fetchOffset.numRetries`` times in all, ``fetchOffset.retryIntervalMs``
        apart, then fails the query naming it (``UnknownTopicError``), as Spark's offset reader (its
        ``describeTopics`` under ``withRetries``) does at any trigger; a ``subscribePattern`` that matches
        nothing is empty (the stream waits for a matching topic)."""
        opts = self.options.source
        attempts = max(1, opts.fetch_offset_retries)
        for attempt in range(1, attempts + 1):
            try:
                found = resolve_partitions(
                    opts.strategy, self.source.topics(), fail_on_data_loss=opts.fail_on_data_loss, require_topics=True
                )
                ids = getattr(self.source, "topic_ids", None)  # a scripted source may have none
                self.topic_ids = dict(ids()) if ids is not None else {}
                return found
            except UnknownTopicError as e:
                if attempt == attempts:
                    raise UnknownTopicError(
                        f"{e} (looked for {attempts} times, {opts.fetch_offset_retry_interval_ms} ms apart: "
                        "fetchOffset.numRetries, fetchOffset.retryIntervalMs)"
                    ) from None
                log.warning("%s; looking again (attempt %d of %d)", e, attempt + 1, attempts)
                self._sleep(opts.fetch_offset_retry_interval_ms / 1000.0)
        raise AssertionError("unreachable")  # pragma: no cover

    def initial_offsets(self) -> dict[TopicPartition, int]:
        """The starting limit resolved against the cluster, once per planner (Spark asks again until the
        first batch is written; resolving ``latest`` again would skip records that arrived meanwhile)."""
        if self._initial is None:
            opts = self.options.source
            self._initial = resolve_limit(opts.starting, self.partitions(), self.source, role="starting")
            self._initial_ids = self.ids_for(self._initial)
        return dict(self._initial)

    @property
    def initial_topic_ids(self) -> dict[str, str]:
        """The ids of the topics of ``initial_offsets``, as listed when they were resolved."""
        return dict(self._initial_ids)

    def ids_for(self, offsets: Mapping[TopicPartition, int]) -> dict[str, str]:
        """The known ids (``topic_ids``) of the topics of ``offsets``."""
        topics = {tp.topic for tp in offsets}
        return {t: i for t, i in self.topic_ids.items() if t in topics}

    def fetch_latest(
        self, known: Mapping[TopicPartition, int] | None = None, known_ids: Mapping[str, str] | None = None
    ) -> dict[TopicPartition, int]:
        """Latest offsets of every partition; a latest offset below ``known`` (a stale answer, KAFKA-7703)
        is asked again up to ``fetchOffset.numRetries`` times, ``fetchOffset.retryIntervalMs`` apart, unless
        its topic's id differs from ``known_ids`` (a re-created topic starts again)."""
        opts = self.options.source
        attempt = 0
        while True:
            partitions = self.partitions()
            latest = self.source.list_offsets({tp: LATEST for tp in partitions}) if partitions else {}
            recreated = recreated_topics(known_ids or {}, self.topic_ids)
            stale = [
                tp
                for tp, o in latest.items()
                if known is not None and tp in known and o < known[tp] and tp.topic not in recreated
            ]
            if not stale or attempt >= opts.fetch_offset_retries:
                return latest
            attempt += 1
            log.warning("latest offsets of %s went back; asking again (attempt %d)", stale, attempt)
            self._sleep(opts.fetch_offset_retry_interval_ms / 1000.0)

    def earliest(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Log start offsets; partitions that no longer exist are left out."""
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        existing = set(self.partitions())
        alive = [tp for tp in wanted if tp in existing]
        return self.source.list_offsets({tp: EARLIEST for tp in alive}) if alive else {}

    # -- micro-batches ---------------------------------------------------------------------------
    def prepare_available_now(self) -> None:
        """``Trigger.AvailableNow``: the latest offsets are taken once, by the first ``latest_offset`` of this
        run, and no later end passes them (``available_now_target``). Not here (SPARK-53560): a batch of the
        offset log that was planned but not committed is run again without a ``latest_offset``, and must not
        be checked against offsets taken after it was planned (partitions added since would fail it at every
        restart). Nor is the starting limit resolved here: a restarted query starts from its checkpoint,
        where a starting timestamp that matches no record any more must not fail it."""
        self._available_now_mode = True

    @property
    def available_now_target(self) -> dict[TopicPartition, int] | None:
        """The offsets ``Trigger.AvailableNow`` reads up to, once the first new batch of the run took them."""
        return None if self._available_now is None else dict(self._available_now)

    def latest_offset(
        self,
        start: Mapping[TopicPartition, int],
        all_available: bool,
        start_ids: Mapping[str, str] | None = None,
    ) -> dict[TopicPartition, int]:
        """The end of the next micro-batch from ``start`` (``start`` itself: no batch now); ``end_topic_ids``
        then holds the topic ids that go with it (``start_ids``, those ``start`` was recorded with, when it is
        ``start``). With no partition left at all (every subscribed topic deleted) there is no batch either
        (SPARK-41375: an empty offset never reaches the offset log). A topic whose id differs from
        ``start_ids`` (re-created) is limited from its earliest offsets and never delays the batch."""
        start_ids = dict(start_ids or {})
        kept_ids = {t: i for t, i in start_ids.items() if any(tp.topic == t for tp in start)}
        if self._available_now_mode:
            if self._available_now is None:
                self._available_now = self.fetch_latest(start, start_ids)
                self._available_now_ids = dict(self.topic_ids)
            latest = dict(self._available_now)
            current_ids = self._available_now_ids
        else:
            latest = self.fetch_latest(start, start_ids)
            current_ids = self.topic_ids
        if not latest:
            self.latest = None
            self.end_topic_ids = kept_ids
            return dict(start)
        self.latest = dict(latest)
        topics = {tp.topic for tp in latest}
        self.end_topic_ids = {t: i for t, i in current_ids.items() if t in topics}
        opts = self.options
        if all_available or not opts.has_limits:
            return latest
        recreated = recreated_topics(start_ids, current_ids)
        begin = {tp: o for tp, o in start.items() if tp.topic not in recreated}
        begin.update(self.earliest(set(latest) - set(begin)))
        if opts.min_offsets_per_trigger is not None and self._available_now is None and not recreated:
            now = self._clock_ms()
            if should_delay(
                opts.min_offsets_per_trigger, begin, latest, now, self._last_trigger_ms, opts.max_trigger_delay_ms
            ):
                self.end_topic_ids = kept_ids
                return dict(start)
            self._last_trigger_ms = now
        end = latest
        if opts.max_offsets_per_trigger is not None:
            end = rate_limit(opts.max_offsets_per_trigger, begin, end)
        if opts.max_bytes_per_trigger is not None:
            by_bytes = byte_limit(opts.max_bytes_per_trigger, begin, latest, self.sample_bytes(begin, latest))
            end = {tp: min(o, by_bytes[tp]) for tp, o in end.items()}
        return end

    def sample_bytes(
        self, begin: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, float]:
        """Bytes per offset at the start of each backlog (see the module docstring)."""
        for tp, e in end.items():
            b = begin.get(tp)
            if b is None or e <= b:
                continue
            seen = []
            try:
                for fetched in self.source.fetch_batches(tp, b, e, max_bytes=SAMPLE_BYTES):
                    seen.append((fetched.base_offset, fetched.last_offset, len(fetched.batch.data)))
                    if sum(s for _, _, s in seen) >= SAMPLE_BYTES or fetched.last_offset + 1 >= e:
                        break
            except Exception as e:  # noqa: BLE001 - an estimate: keep the last one
                log.warning("could not sample %s at offset %d for maxBytesPerTrigger: %s", tp, b, e)
            estimate = bytes_per_offset(seen)
            if estimate is not None:
                self._per_offset[tp] = estimate
        return dict(self._per_offset)

    def check_available_now_end(self, end: Mapping[TopicPartition, int]) -> None:
        """Spark's ``verifyEndOffsetForTriggerAvailableNow``: the end of a batch planned in this run names the
        partitions of the target and none beyond it, and the cluster still has every partition and offset it
        names; else ``AvailableNowError`` with Spark's message (whatever ``failOnDataLoss`` says)."""
        target = self._available_now
        assert target is not None
        if set(target) != set(end):
            raise AvailableNowError(
                "Kafka data source in Trigger.AvailableNow should provide the same topic partitions in "
                "pre-fetched offset to end offset for each microbatch. " + _TRANSIENT + "\n"
                f"topic-partitions for pre-fetched offset: {_scala_set(target)}, topic-partitions for end offset: "
                f"{_scala_set(end)}."
            )
        if any(end[tp] > target[tp] for tp in end):
            raise AvailableNowError(
                "For Kafka data source with Trigger.AvailableNow, end offset should have lower or equal offset per "
                "each topic partition than pre-fetched offset. " + _TRANSIENT + "\n"
                f"pre-fetched offset: {_scala_map(target)}, end offset: {_scala_map(end)}."
            )
        latest = self.fetch_latest(end)
        if not set(end) <= set(latest):
            raise AvailableNowError(
                "Some of partitions in Kafka topic(s) have been lost during running query with "
                "Trigger.AvailableNow. " + _TRANSIENT + "\n"
                f"topic-partitions for latest offset: {_scala_set(latest)}, topic-partitions for end offset: "
                f"{_scala_set(end)}"
            )
        if any(end[tp] > latest[tp] for tp in end):
            raise AvailableNowError(
                "Some of partitions in Kafka topic(s) report available offset which is less than end offset during "
                "running query with Trigger.AvailableNow. " + _TRANSIENT + "\n"
                f"latest offset: {_scala_map(latest)}, end offset: {_scala_map(end)}"
            )

    def _without_unplanned(
        self, start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]
    ) -> Mapping[TopicPartition, int]:
        """``start`` without the partitions that are missing from ``end`` but exist: Spark keeps a query's
        initial offsets in its checkpoint, a Python source cannot, so the start of a re-run first batch is
        resolved again and may hold partitions added after that batch was planned. Those are not lost: the
        next batch starts them at their earliest offset. Only a partition that no longer exists is gone."""
        missing = set(start) - set(end)
        if not missing:
            return start
        topics = self.source.topics()
        alive = {tp for tp in missing if tp.partition < topics.get(tp.topic, 0)}
        if alive:
            log.info("partitions %s are not in this batch's end offsets (added since it was planned)", sorted(alive))
        return {tp: o for tp, o in start.items() if tp not in alive}

    def plan(
        self,
        start: Mapping[TopicPartition, int],
        end: Mapping[TopicPartition, int],
        start_ids: Mapping[str, str] | None = None,
        end_ids: Mapping[str, str] | None = None,
    ) -> list[OffsetRange]:
        """The offset ranges of the micro-batch ``[start, end)``, split as ``minPartitions`` /
        ``maxRecordsPerPartition`` ask; under ``Trigger.AvailableNow`` a batch planned in this run is checked
        first (``check_available_now_end``). A topic whose id differs between ``start_ids`` and ``end_ids`` was
        deleted and re-created: data loss naming it; with ``failOnDataLoss=false`` its partitions are read
        from their earliest offsets of the new topic."""
        opts = self.options.source
        if self._available_now is not None:
            self.check_available_now_end(end)
        recreated = recreated_topics(start_ids or {}, end_ids or {})
        for topic, (old_id, new_id) in recreated.items():
            report_data_loss(
                f"Topic {topic!r} was deleted and re-created: its topic id changed from {old_id} to {new_id}, so the "
                "offsets the query had reached belong to the deleted topic and records may have been missed "
                "(without failOnDataLoss the new topic is read from its earliest offsets)",
                opts.fail_on_data_loss,
            )
        if recreated:
            start = {tp: o for tp, o in start.items() if tp.topic not in recreated}
        start = self._without_unplanned(start, end)
        new = set(end) - set(start)
        ranges = plan_stream_ranges(
            start,
            end,
            self.earliest(new) if new else {},
            fail_on_data_loss=opts.fail_on_data_loss,
            custom_group="group.id" in opts.client_properties,
        )
        return split_ranges(ranges, opts.min_partitions, opts.max_records_per_partition)
