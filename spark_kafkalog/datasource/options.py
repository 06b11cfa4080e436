"""Options of the ``kafkalog`` source and sink: Spark's Kafka connector names, defaults and rules (pure).

``parse_source_options(mapping)`` and ``parse_sink_options(mapping)`` take the options a DataFrame
reader or writer was given (keys case-insensitive, values strings) and return immutable, picklable
settings, or raise ``KafkaOptionError`` whose message names the option and shows an example. The rules
are those of Spark's ``KafkaSourceProvider`` (validateBatchOptions, strategy checks, forbidden
``kafka.*`` keys), with these kafkalog choices:

- an unknown option is an error naming the closest known one (Spark ignores it silently);
- ``subscribePattern`` is a Python regular expression, matched with ``re.search`` as Spark matches
  (``orders`` also selects ``orders-eu``);
- ``kafka.*`` settings are checked here against the client's configuration table, so a typo fails at
  planning rather than in a task; every one is passed to the client, the security ones
  (``kafka.security.protocol``, ``kafka.sasl.*``, ``kafka.ssl.*``) included: their syntax is checked here, key
  and trust store files are read by the client that uses them (on the executor running the task). The
  options' ``repr`` leaves the client settings out (passwords, JAAS lines), and errors never show their values;
- streaming-only options (``maxOffsetsPerTrigger``, ...) are validated and ignored in batch, as Spark
  ignores them with a warning.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from spark_kafkalog.datasource.format_options import READ_FORMAT_OPTIONS, REGISTRY_PREFIX, WRITE_FORMAT_OPTIONS
from spark_kafkalog.datasource.formats import (
    FormatOptionError,
    ReadFormats,
    WriteFormats,
    parse_read_formats,
    parse_write_formats,
)
from spark_kafkalog.datasource.offsets import (
    EARLIEST,
    LATEST,
    OFFSETS_EXAMPLE,
    EarliestLimit,
    GlobalTimestampLimit,
    LatestLimit,
    OffsetLimit,
    OffsetsJsonError,
    SpecificOffsetsLimit,
    SpecificTimestampsLimit,
    TimestampStrategy,
    TopicPartition,
    parse_assign,
    parse_partition_timestamps,
    parse_specific_offsets,
)

__all__ = [
    "Assign",
    "KafkaOptionError",
    "SinkOptions",
    "SourceOptions",
    "Subscribe",
    "SubscribePattern",
    "SubscriptionStrategy",
    "parse_include_headers",
    "parse_sink_options",
    "parse_source_options",
]

BOOTSTRAP = "kafka.bootstrap.servers"
STRATEGY_NAMES = ("subscribe", "subscribePattern", "assign")

# Spark's spelling of every option (the lower-case form is the lookup key).
_SOURCE_OPTIONS = (
    BOOTSTRAP,
    "assign",
    "subscribe",
    "subscribePattern",
    "startingOffsets",
    "startingOffsetsByTimestamp",
    "startingTimestamp",
    "startingOffsetsByTimestampStrategy",
    "endingOffsets",
    "endingOffsetsByTimestamp",
    "endingTimestamp",
    "failOnDataLoss",
    "minPartitions",
    "maxRecordsPerPartition",
    "includeHeaders",
    "groupIdPrefix",
    "kafkaConsumer.pollTimeoutMs",
    "fetchOffset.numRetries",
    "fetchOffset.retryIntervalMs",
    # streaming only: validated, ignored by batch reads (as Spark does)
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    *READ_FORMAT_OPTIONS,  # Schema Registry formats of key and value (formats)
)
_SINK_OPTIONS = (BOOTSTRAP, "topic", "includeHeaders", "exactlyOnce", *WRITE_FORMAT_OPTIONS)
_STREAMING_ONLY = ("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")

# kafka.* keys Spark refuses, with the reason it gives.
_FORBIDDEN_SOURCE_KEYS = {
    "auto.offset.reset": "set the source option 'startingOffsets' to 'earliest' or 'latest' instead, e.g. "
    '.option("startingOffsets", "earliest"); the source tracks offsets itself',
    "key.deserializer": "keys are always read as bytes (column 'key' is binary); deserialize with DataFrame "
    'operations, e.g. col("key").cast("string")',
    "value.deserializer": "values are always read as bytes (column 'value' is binary); deserialize with "
    'DataFrame operations, e.g. col("value").cast("string")',
    "enable.auto.commit": "the source does not commit offsets to Kafka; it plans offset ranges itself from "
    'options, e.g. .option("startingOffsets", "earliest")',
    "interceptor.classes": "consumer interceptors are not supported; transform the DataFrame instead, e.g. "
    'df.withColumn("value", ...)',
}
_FORBIDDEN_SINK_KEYS = {
    "key.serializer": "keys are written as bytes; cast column 'key' to string or binary first, e.g. "
    'col("id").cast("string").alias("key")',
    "value.serializer": "values are written as bytes; cast column 'value' to string or binary first, e.g. "
    'to_json(struct("*")).alias("value")',
}

DEFAULT_POLL_TIMEOUT_MS = 120_000  # spark.network.timeout (120 s), Spark's default
DEFAULT_FETCH_OFFSET_RETRIES = 3
DEFAULT_FETCH_OFFSET_RETRY_INTERVAL_MS = 1000  # the code default (the guide says 10)
DEFAULT_GROUP_ID_PREFIX = "spark-kafka-relation"


class KafkaOptionError(ValueError):
    """An invalid, missing or conflicting option; the message names it and shows an example."""


@dataclass(frozen=True)
class Assign:
    """``assign``: exactly these topic-partitions."""

    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class Subscribe:
    """``subscribe``: every partition of these topics (topics that do not exist contribute none)."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    """``subscribePattern``: every partition of the topics the pattern finds (``re.search``), internal
    topics (names starting with ``__``) excluded."""

    pattern: str

    def matches(self, topic: str) -> bool:
        return not topic.startswith("__") and re.search(self.pattern, topic) is not None


SubscriptionStrategy = Assign | Subscribe | SubscribePattern


@dataclass(frozen=True)
class SourceOptions:
    """Validated read settings; ``client_properties`` are the ``kafka.*`` options without the prefix
    (``bootstrap.servers`` included), ready for ``ClientConfig.from_kafka_properties``."""

    bootstrap_servers: str
    strategy: SubscriptionStrategy
    starting: OffsetLimit = EarliestLimit()
    ending: OffsetLimit = LatestLimit()
    fail_on_data_loss: bool = True
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    include_headers: bool = False
    poll_timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS
    fetch_offset_retries: int = DEFAULT_FETCH_OFFSET_RETRIES
    fetch_offset_retry_interval_ms: int = DEFAULT_FETCH_OFFSET_RETRY_INTERVAL_MS
    client_properties: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold passwords
    formats: ReadFormats | None = None
    """Schema Registry formats of ``key``/``value`` (``formats``); None: both raw binary."""


@dataclass(frozen=True)
class SinkOptions:
    """Validated write settings; ``topic`` (trimmed) overrides a ``topic`` column when set."""

    bootstrap_servers: str
    topic: str | None = None
    client_properties: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold passwords
    exactly_once: bool = False
    """``exactlyOnce`` (or ``kafka.transactional.id``): each task writes in a Kafka transaction the driver
    commits (``exactly_once``)."""
    transactional_id_prefix: str | None = None
    """``kafka.transactional.id``: the tasks' transactional ids are ``<prefix>-<partition>``; set by the
    parser for streams (from ``checkpointLocation``) and batch writes (one per write) when not given."""
    formats: WriteFormats | None = None
    """Schema Registry formats of ``key``/``value`` (``formats``); None: both written as given."""


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in options.items():
        out[str(key).lower()] = value if value is None else str(value)
    return out


def _check_known(opts: Mapping[str, str], known: tuple[str, ...], direction: str, other: tuple[str, ...]) -> None:
    by_lower = {name.lower(): name for name in known}
    for key in opts:
        if key.startswith(("kafka.", REGISTRY_PREFIX)) or key in by_lower:
            continue
        if key in {name.lower() for name in other}:
            raise KafkaOptionError(
                f"Option '{key}' does not apply to {direction} with format 'kafkalog'; remove it. "
                f"Options for {direction}: {', '.join(known)}, kafka.* (e.g. kafka.client.id)"
            )
        close = difflib.get_close_matches(key, list(by_lower), n=1, cutoff=0.6)
        hint = f"; did you mean '{by_lower[close[0]]}'?" if close else ""
        raise KafkaOptionError(
            f"Unknown option '{key}' for {direction} with format 'kafkalog'{hint} Known options: "
            f"{', '.join(known)}, and kafka.* for client settings (e.g. kafka.fetch.max.bytes)"
        )


def _bool(opts: Mapping[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    text = raw.strip().lower()
    if text not in ("true", "false"):
        raise KafkaOptionError(
            f"Invalid value '{raw}' for option '{name}': must be true or false, e.g. .option(\"{name}\", \"false\")"
        )
    return text == "true"


def _positive_int(opts: Mapping[str, str], name: str, example: str, *, allow_zero: bool = False) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        value = None
    if value is None or value < 0 or (value == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise KafkaOptionError(
            f"Invalid value '{raw}' for option '{name}', must be a {kind} integer, e.g. .option(\"{name}\", \"{example}\")"
        )
    return value


def _timestamp(opts: Mapping[str, str], name: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise KafkaOptionError(
            f"Invalid value '{raw}' for option '{name}': expected a single long value (milliseconds since the "
            f'epoch), e.g. .option("{name}", "1700000000000")'
        ) from None
    if value < 0:
        raise KafkaOptionError(
            f"Invalid value '{raw}' for option '{name}': timestamps must be >= 0 (milliseconds since the epoch), "
            f'e.g. .option("{name}", "1700000000000")'
        )
    return value


def _bootstrap(opts: Mapping[str, str], role: str) -> str:
    servers = (opts.get(BOOTSTRAP) or "").strip()
    if not servers:
        raise KafkaOptionError(
            f"Option '{BOOTSTRAP}' must be specified for configuring Kafka {role}, e.g. "
            f'.option("{BOOTSTRAP}", "host1:9092,host2:9092")'
        )
    return servers


def _check_forbidden(opts: Mapping[str, str], forbidden: Mapping[str, str]) -> None:
    """Spark's refused ``kafka.*`` keys (``kafka.auto.offset.reset``, serializers, ...)."""
    for key in opts:
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if name in forbidden:
            raise KafkaOptionError(f"Kafka option '{name}' is not supported: {forbidden[name]}")


def _client_properties(opts: Mapping[str, str], forbidden: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.*`` options without the prefix, checked against the client's configuration table."""
    from spark_kafkalog.client.config import ClientConfig  # the client package, not pyspark
    from spark_kafkalog.client.errors import ConfigError

    _check_forbidden(opts, forbidden)
    props: dict[str, str] = {}
    for key, value in opts.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if value is None:
            raise KafkaOptionError(f'Option \'{key}\' has no value; give one, e.g. .option("kafka.client.id", "etl")')
        props[name] = value
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ClientConfig.from_kafka_properties(props)
    except ConfigError as e:
        message = str(e)
        for name in props:
            message = message.replace(f"'{name}'", f"'kafka.{name}'")
        raise KafkaOptionError(
            f"Invalid Kafka client option: {message}. Client settings are Kafka's names prefixed with 'kafka.', "
            'e.g. .option("kafka.max.partition.fetch.bytes", "4194304")'
        ) from None
    return props


def _check_strategy(opts: Mapping[str, str]) -> str:
    """Spark's first strategy checks (exactly one given, not empty); returns its name. JSON and pattern
    syntax are checked by ``_strategy``, later, as Spark parses them after the other options."""
    given = [name for name in STRATEGY_NAMES if name.lower() in opts]
    if not given:
        raise KafkaOptionError(
            "One of the following options must be specified for Kafka source: subscribe, subscribePattern, "
            'assign, e.g. .option("subscribe", "topicA,topicB"). See the docs for more details.'
        )
    if len(given) > 1:
        raise KafkaOptionError(
            "Only one of the following options can be specified for Kafka source: subscribe, subscribePattern, "
            f'assign (got {", ".join(given)}), e.g. .option("subscribe", "topicA,topicB"). See the docs for more details.'
        )
    name = given[0]
    value = opts[name.lower()] or ""
    if name == "assign" and not value.strip().startswith("{"):
        try:
            parse_assign(value)  # raises with the example
        except OffsetsJsonError as e:
            raise KafkaOptionError(str(e)) from None
    if name == "subscribe" and not any(t.strip() for t in value.split(",")):
        raise KafkaOptionError(
            f"No topics to subscribe to as specified value for option 'subscribe' is '{value}'; "
            'expected e.g. .option("subscribe", "topicA,topicB")'
        )
    if name == "subscribePattern" and not value.strip():
        raise KafkaOptionError(
            f"Pattern to subscribe is empty as specified value for option 'subscribePattern' is '{value}'; "
            'expected e.g. .option("subscribePattern", "orders-.*")'
        )
    return name


def _strategy(opts: Mapping[str, str]) -> SubscriptionStrategy:
    name = _check_strategy(opts)
    value = opts[name.lower()] or ""
    if name == "assign":
        try:
            return Assign(tuple(parse_assign(value)))
        except OffsetsJsonError as e:
            raise KafkaOptionError(str(e)) from None
    if name == "subscribe":
        return Subscribe(tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip())))
    try:
        re.compile(value)
    except re.error as e:
        raise KafkaOptionError(
            f"Invalid value '{value}' for option 'subscribePattern': not a valid regular expression ({e}); "
            'expected e.g. .option("subscribePattern", "orders-.*")'
        ) from None
    return SubscribePattern(value)


def _offsets_limit(opts: Mapping[str, str], name: str, default: OffsetLimit) -> OffsetLimit:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    text = raw.strip().lower()
    if text == "earliest":
        return EarliestLimit()
    if text == "latest":
        return LatestLimit()
    try:
        return parse_specific_offsets(raw, name)
    except OffsetsJsonError as e:
        raise KafkaOptionError(f"{e} (or 'earliest' / 'latest')") from None


def _limit(opts: Mapping[str, str], prefix: str, default: OffsetLimit, strategy: str) -> OffsetLimit:
    """Spark's precedence: ``<prefix>Timestamp`` > ``<prefix>OffsetsByTimestamp`` > ``<prefix>Offsets``."""
    ts = _timestamp(opts, f"{prefix}Timestamp")
    if ts is not None:
        return GlobalTimestampLimit(ts, strategy)
    by_ts = opts.get(f"{prefix}OffsetsByTimestamp".lower())
    if by_ts is not None:
        try:
            return SpecificTimestampsLimit(parse_partition_timestamps(by_ts, f"{prefix}OffsetsByTimestamp"), strategy)
        except OffsetsJsonError as e:
            raise KafkaOptionError(str(e)) from None
    return _offsets_limit(opts, f"{prefix}Offsets", default)


def _check_batch_limits(starting: OffsetLimit, ending: OffsetLimit) -> None:
    """Spark's validateBatchOptions: no 'latest' start, no 'earliest' end, matching JSON partition sets."""
    _check_batch_start(starting)
    _check_batch_end(ending)
    _check_limit_pair(starting, ending)


def _check_batch_start(starting: OffsetLimit) -> None:
    if isinstance(starting, LatestLimit):
        raise KafkaOptionError(
            "starting offset can't be latest for batch queries on Kafka (option 'startingOffsets'); use "
            f"'earliest' or a JSON, e.g. {OFFSETS_EXAMPLE.replace('-1', '-2')}"
        )
    if isinstance(starting, SpecificOffsetsLimit):
        for topic, offset in sorted(starting.topics.items()):
            if offset == LATEST:
                raise KafkaOptionError(
                    f"startingOffsets for topic {topic} can't be latest for batch queries on Kafka; use "
                    f'"earliest" or offsets >= 0, e.g. {{"{topic}":"earliest"}}'
                )
        for tp, offset in sorted(starting.offsets.items()):
            if offset == LATEST:
                raise KafkaOptionError(
                    f"startingOffsets for {tp} can't be latest (-1) for batch queries on Kafka; use -2 (earliest) "
                    'or an offset >= 0, e.g. {"topicA":{"0":23,"1":-2}}'
                )


def _check_batch_end(ending: OffsetLimit) -> None:
    if isinstance(ending, EarliestLimit):
        raise KafkaOptionError(
            "ending offset can't be earliest for batch queries on Kafka (option 'endingOffsets'); use 'latest' "
            'or a JSON, e.g. {"topicA":{"0":50,"1":-1}}'
        )
    if isinstance(ending, SpecificOffsetsLimit):
        for topic, offset in sorted(ending.topics.items()):
            if offset == EARLIEST:
                raise KafkaOptionError(
                    f"endingOffsets for topic {topic} can't be earliest for batch queries on Kafka; use "
                    f'"latest" or offsets >= 0, e.g. {{"{topic}":"latest"}}'
                )
        for tp, offset in sorted(ending.offsets.items()):
            if offset == EARLIEST:
                raise KafkaOptionError(
                    f"endingOffsets for {tp} can't be earliest (-2) for batch queries on Kafka; use -1 (latest) "
                    'or an offset >= 0, e.g. {"topicA":{"0":50,"1":-1}}'
                )


def _check_limit_pair(starting: OffsetLimit, ending: OffsetLimit) -> None:
    """Spark's checkOffsetLimitValidity: JSON starts and ends name the same partitions, start <= end."""
    if isinstance(starting, SpecificOffsetsLimit) and isinstance(ending, SpecificOffsetsLimit):
        # Topic-level entries ({"t":"earliest"}) cover partitions known only at planning: checked there.
        per_topic = bool(starting.topics or ending.topics)
        _check_partition_pair(starting.offsets, ending.offsets, "Offsets", per_topic)
    elif isinstance(starting, SpecificTimestampsLimit) and isinstance(ending, SpecificTimestampsLimit):
        _check_partition_pair(starting.timestamps, ending.timestamps, "OffsetsByTimestamp", False)


def _check_partition_pair(
    start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int], what: str, per_topic: bool
) -> None:
    """The same partitions in ``start`` and ``end`` (unless topic-level entries name more), start <= end."""
    if set(start) != set(end) and not per_topic:
        raise KafkaOptionError(
            f"The starting{what} and ending{what} options name different topic-partitions: only in "
            f"starting: {sorted(map(str, set(start) - set(end)))}, only in ending: "
            f"{sorted(map(str, set(end) - set(start)))}; give both the same partitions, e.g. "
            f'starting{what} {{"t":{{"0":5}}}} with ending{what} {{"t":{{"0":9}}}}'
        )
    for tp in sorted(set(start) & set(end)):
        if start[tp] >= 0 and end[tp] >= 0 and start[tp] > end[tp]:
            raise KafkaOptionError(
                f"The starting{what} value {start[tp]} of {tp} is greater than its ending{what} value "
                f'{end[tp]}; the start must be <= the end, e.g. starting{what} {{"t":{{"0":5}}}} with '
                f'ending{what} {{"t":{{"0":9}}}}'
            )


def parse_include_headers(options: Mapping[str, str]) -> bool:
    """Only ``includeHeaders`` (what the read schema depends on), validated."""
    return _bool(_lower(options), "includeHeaders", False)


def parse_source_options(options: Mapping[str, str]) -> SourceOptions:
    """Validated batch-read settings from DataFrameReader options (case-insensitive keys).

    Errors come in the order of Spark's ``KafkaSourceProvider`` (validateBatchOptions, then
    validateGeneralOptions, then checkOffsetLimitValidity and the strategy's parsing), so the same wrong
    options give the same first complaint: an unknown option (kafkalog only); the starting limit (and no
    'latest'); the ending limit (and no 'earliest'); the subscription given; ``minPartitions`` /
    ``maxRecordsPerPartition``; refused ``kafka.*`` keys; ``kafka.bootstrap.servers``; the per-trigger
    limits; start/end pairs; the ``assign`` JSON / pattern syntax and the ``kafka.*`` values.
    """
    opts = _lower(options)
    _check_known(opts, _SOURCE_OPTIONS, "reads", _SINK_OPTIONS)
    raw_strategy = opts.get("startingoffsetsbytimestampstrategy")
    ts_strategy = TimestampStrategy.ERROR
    if raw_strategy is not None:
        ts_strategy = raw_strategy.strip().lower()
        if ts_strategy not in TimestampStrategy.ALL:
            raise KafkaOptionError(
                f"Invalid value '{raw_strategy}' for option 'startingOffsetsByTimestampStrategy': must be 'error' "
                'or \'latest\', e.g. .option("startingOffsetsByTimestampStrategy", "latest")'
            )
    starting = _limit(opts, "starting", EarliestLimit(), ts_strategy)
    _check_batch_start(starting)
    # An ending timestamp without a match means "latest" (Spark), whatever the starting strategy says.
    ending = _limit(opts, "ending", LatestLimit(), TimestampStrategy.LATEST)
    _check_batch_end(ending)
    _check_strategy(opts)
    min_partitions = _positive_int(opts, "minPartitions", "10")
    max_records_per_partition = _positive_int(opts, "maxRecordsPerPartition", "100000")
    _check_forbidden(opts, _FORBIDDEN_SOURCE_KEYS)
    servers = _bootstrap(opts, "consumer")
    max_per_trigger = _positive_int(opts, "maxOffsetsPerTrigger", "10000")
    min_per_trigger = _positive_int(opts, "minOffsetsPerTrigger", "1000")
    if max_per_trigger is not None and min_per_trigger is not None and min_per_trigger > max_per_trigger:
        raise KafkaOptionError(
            f"Option 'minOffsetsPerTrigger' ({min_per_trigger}) must be <= 'maxOffsetsPerTrigger' ({max_per_trigger}), "
            'e.g. .option("minOffsetsPerTrigger", "1000").option("maxOffsetsPerTrigger", "10000")'
        )
    delay = opts.get("maxtriggerdelay")
    if delay is not None and not re.fullmatch(r"\s*\d+\s*(us|ms|s|m|min|h|d)?\s*", delay.lower()):
        raise KafkaOptionError(
            f"Invalid value '{delay}' for option 'maxTriggerDelay': expected a duration, e.g. \"15m\" or \"30s\""
        )
    _check_limit_pair(starting, ending)
    strategy = _strategy(opts)
    if isinstance(strategy, Assign):
        _check_partitions_match(strategy, starting, "starting")
        _check_partitions_match(strategy, ending, "ending")
    props = _client_properties(opts, _FORBIDDEN_SOURCE_KEYS)
    formats = _read_formats(opts, strategy)
    return SourceOptions(
        bootstrap_servers=servers,
        strategy=strategy,
        starting=starting,
        ending=ending,
        fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
        min_partitions=min_partitions,
        max_records_per_partition=max_records_per_partition,
        include_headers=_bool(opts, "includeHeaders", False),
        poll_timeout_ms=_positive_int(opts, "kafkaConsumer.pollTimeoutMs", "120000") or DEFAULT_POLL_TIMEOUT_MS,
        fetch_offset_retries=_retries(opts),
        fetch_offset_retry_interval_ms=_interval(opts),
        client_properties=props,
        formats=formats,
    )


def _read_formats(opts: Mapping[str, str], strategy: SubscriptionStrategy) -> ReadFormats | None:
    """The Schema Registry formats of ``key``/``value`` (``formats``), for the topics ``strategy`` names."""
    topics: tuple[str, ...] | None = None
    if isinstance(strategy, Subscribe):
        topics = strategy.topics
    elif isinstance(strategy, Assign):
        topics = tuple(tp.topic for tp in strategy.partitions)
    try:
        return parse_read_formats(opts, topics)
    except FormatOptionError as e:
        raise KafkaOptionError(str(e)) from None


def parse_read_formats_only(options: Mapping[str, str]) -> ReadFormats | None:
    """Only the ``key``/``value`` formats of DataFrameReader ``options`` (the schema Spark asks at ``load()``:
    a stream's options are not a batch read's, so the whole ``parse_source_options`` does not apply)."""
    opts = _lower(options)
    if not any(k in opts for k in ("valueformat", "keyformat")):
        return None
    return _read_formats(opts, _strategy(opts))


def _retries(opts: Mapping[str, str]) -> int:
    value = _positive_int(opts, "fetchOffset.numRetries", "3", allow_zero=True)
    return DEFAULT_FETCH_OFFSET_RETRIES if value is None else value


def _interval(opts: Mapping[str, str]) -> int:
    value = _positive_int(opts, "fetchOffset.retryIntervalMs", "1000", allow_zero=True)
    return DEFAULT_FETCH_OFFSET_RETRY_INTERVAL_MS if value is None else value


def _check_partitions_match(strategy: Assign, limit: OffsetLimit, which: str) -> None:
    """Spark's startOffsetDoesNotMatchAssigned: specific offsets/timestamps must name exactly the assigned
    partitions (checked here for ``assign``; for subscriptions once the topics are known)."""
    assigned = set(strategy.partitions)
    unknown_topics: list[str] = []
    if isinstance(limit, SpecificOffsetsLimit):
        given, name = limit.named(assigned), f"{which}Offsets"
        unknown_topics = limit.missing_topics(assigned)
    elif isinstance(limit, SpecificTimestampsLimit):
        given, name = set(limit.timestamps), f"{which}OffsetsByTimestamp"
    else:
        return
    if unknown_topics:
        raise KafkaOptionError(
            f"Option '{name}' names topic(s) {unknown_topics} that 'assign' does not: give offsets only for "
            f'assigned topics, e.g. {{"t":"earliest"}} with assign {{"t":[0,1]}}. Assigned: '
            f"{sorted(map(str, assigned))}"
        )
    if given != assigned:
        raise KafkaOptionError(
            f"If '{name}' contains specific offsets, you must specify all TopicPartitions. Use -1 for latest, "
            f'-2 for earliest, e.g. {{"t":{{"0":23,"1":-2}}}}. Specified: {sorted(map(str, given))} '
            f"Assigned: {sorted(map(str, assigned))}"
        )


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Validated write settings from DataFrameWriter options (case-insensitive keys)."""
    opts = _lower(options)
    _check_known(opts, _SINK_OPTIONS, "writes", _SOURCE_OPTIONS)
    _check_forbidden(opts, _FORBIDDEN_SINK_KEYS)  # Spark's kafkaParamsForProducer checks these first
    servers = _bootstrap(opts, "producer")
    topic = opts.get("topic")
    if topic is not None:
        topic = topic.strip()
        if not topic:
            raise KafkaOptionError(
                "Option 'topic' is empty; give a topic name, e.g. .option(\"topic\", \"events\"), or drop it and write a 'topic' column"
            )
    props = _client_properties(opts, _FORBIDDEN_SINK_KEYS)
    prefix = props.pop("transactional.id", None)
    exactly_once = _bool(opts, "exactlyOnce", False) or prefix is not None
    if prefix is not None and not prefix.strip():
        raise KafkaOptionError(
            "Option 'kafka.transactional.id' is empty; give a prefix for the tasks' transactional ids, e.g. "
            '.option("kafka.transactional.id", "orders-sink")'
        )
    try:
        formats = parse_write_formats(opts)
    except FormatOptionError as e:
        raise KafkaOptionError(str(e)) from None
    return SinkOptions(
        bootstrap_servers=servers,
        topic=topic,
        client_properties=props,
        exactly_once=exactly_once,
        transactional_id_prefix=prefix,
        formats=formats,
    )
