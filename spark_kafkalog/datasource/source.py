"""The ``kafkalog`` PySpark data source: a thin adapter from Spark's Python Data Source API to the pure parts.

    from spark_kafkalog.datasource import register
    register(spark)
    df = (spark.read.format("kafkalog")
          .option("kafka.bootstrap.servers", "localhost:9092")
          .option("subscribe", "events")
          .load())
    df.selectExpr("CAST(key AS STRING) AS key", "value").write.format("kafkalog") \\
        .option("kafka.bootstrap.servers", "localhost:9092").option("topic", "copy").mode("append").save()

Where each step runs (PySpark 4.3): ``DataSource.schema`` at ``load()``; ``reader`` (options checked) and
``partitions`` (offset ranges planned with a ``KafkaClient``) in a planning worker when a query runs;
``read`` in a task, one offset range per task, each opening and closing its own client; ``writer`` at
``save()`` and ``DataSourceArrowWriter.write`` in each task, each with its own ``Producer``. Streams:
``streamReader``/``streamWriter`` (options checked first) return ``stream_source``'s micro-batch reader
and Arrow stream writer.

Filter pushdown: a reader that defines ``pushFilters`` makes every read fail unless
``spark.sql.python.filterPushdown.enabled`` is on (``DATA_SOURCE_PUSHDOWN_DISABLED``), and the reader
cannot read Spark's configuration. ``reader`` therefore looks at the PySpark planning worker that calls it:
the filter-pushdown worker, or the plain planning worker whose ``enable_pushdown`` flag is set, get
``KafkaLogPushdownReader``; anything else (the conf off, a direct call) gets ``KafkaLogReader``. The
pushdown reader prunes partitions on ``topic``/``partition`` predicates and narrows offset ranges on
``offset`` bounds (all exact, so Spark does not re-evaluate them) and starts each range at the first
record at or after a lower ``timestamp`` bound through ListOffsets (Spark re-evaluates timestamp filters:
CreateTime need not grow with the offset, so only the lower bound is used).
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from types import FrameType
from typing import Any, TypeGuard

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    LessThan,
    LessThanOrEqual,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark_kafkalog.client import Producer
from spark_kafkalog.datasource.exactly_once import TaskTransaction, end_transactions, write_task
from spark_kafkalog.datasource.options import (
    KafkaOptionError,
    SinkOptions,
    SourceOptions,
    parse_include_headers,
    parse_read_formats_only,
    parse_sink_options,
    parse_source_options,
)
from spark_kafkalog.datasource.planning import OffsetRange, ScanBounds, plan_batch
from spark_kafkalog.datasource.scan import client_config, open_client, read_offset_range
from spark_kafkalog.datasource.sink import RecordWriter, check_write_schema
from spark_kafkalog.datasource.spark_writers import batch_save_mode, install_loaded

__all__ = [
    "KAFKA_SCHEMA",
    "KafkaLogCommitMessage",
    "KafkaLogDataSource",
    "KafkaLogInputPartition",
    "KafkaLogPushdownReader",
    "KafkaLogReader",
    "KafkaLogWriter",
    "kafka_schema",
    "kafkalog_session",
    "register",
]

log = logging.getLogger(__name__)

install_loaded()  # df.write.format("kafkalog").save() takes the save modes of Spark's Kafka sink (spark_writers)

KAFKA_SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
)
HEADERS_FIELD = StructField(
    "headers", ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
)


def kafka_schema(include_headers: bool) -> StructType:
    """Spark's Kafka source schema (``headers`` only with ``includeHeaders``)."""
    return StructType(KAFKA_SCHEMA.fields + [HEADERS_FIELD]) if include_headers else KAFKA_SCHEMA


def read_schema(options: SourceOptions) -> tuple[SourceOptions, StructType]:
    """``options`` with the Schema Registry reader schemas pinned (``value_formats.resolve_read_formats``)
    and the schema of the rows: Spark's Kafka schema, ``key``/``value`` decoded when they have a format."""
    if options.formats is None:
        return options, kafka_schema(options.include_headers)
    from pyspark.sql.pandas.types import from_arrow_schema

    from spark_kafkalog.datasource.value_formats import read_arrow_schema, resolve_read_formats

    options = replace(options, formats=resolve_read_formats(options.formats))
    assert options.formats is not None
    return options, from_arrow_schema(read_arrow_schema(options.formats, options.include_headers))


def _check_read_schema(options: SourceOptions, expected: StructType, schema: StructType) -> None:
    if schema == expected:
        return
    if options.formats is not None:
        raise KafkaOptionError(
            "The schema of the decoded key/value is derived from the Schema Registry and cannot be set: expected "
            f"{expected.simpleString()}, got {schema.simpleString()} (a new version registered since load()? "
            'load() again, or pin the reader schema, e.g. .option("valueSchemaVersion", "3"))'
        )
    raise KafkaOptionError(
        "Kafka source has a fixed schema and cannot be set with a custom one: expected "
        f"{expected.simpleString()}, got {schema.simpleString()}; read with the fixed schema and cast, e.g. "
        'df.selectExpr("CAST(value AS STRING) AS value")'
    )


def write_options(options: SinkOptions, schema: StructType) -> SinkOptions:
    """``options`` with the Schema Registry writer schemas fixed from the DataFrame's ``schema`` and checked
    against the registry when the topic is known (``value_formats.prepare_write_formats``)."""
    if options.formats is None:
        return options
    from pyspark.sql.pandas.types import to_arrow_type

    from spark_kafkalog.datasource.value_formats import prepare_write_formats

    types = {
        f.name: to_arrow_type(f.dataType, timezone="UTC") for f in schema.fields if options.formats.formatted(f.name)
    }
    return replace(options, formats=prepare_write_formats(options.formats, types, options.topic))


class KafkaLogInputPartition(InputPartition):
    """One Spark partition: an ``OffsetRange`` of one topic-partition (picklable)."""

    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)

    @property
    def offset_range(self) -> OffsetRange:
        return self.value


class KafkaLogReader(DataSourceReader):
    """Batch reader: plans offset ranges on the driver, reads one range per task."""

    def __init__(self, options) -> None:
        self.options = options
        self.bounds: ScanBounds | None = None

    def partitions(self) -> list[InputPartition]:
        with open_client(self.options, planning=True) as client:
            ranges = plan_batch(self.options, client, self.bounds)
        return [KafkaLogInputPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, KafkaLogInputPartition):
            return  # Spark's placeholder when there is nothing to read
        with open_client(self.options) as client:
            yield from read_offset_range(self.options, partition.offset_range, client)


_NEVER_NULL = frozenset(("topic", "partition", "offset", "timestamp", "timestampType"))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _millis_floor(value: object) -> int | None:
    """Milliseconds since the epoch at or before an aware ``datetime`` (Spark's TIMESTAMP literals)."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    return ((value - _EPOCH) // timedelta(microseconds=1)) // 1000


def push_filter(f: Filter, bounds: ScanBounds) -> tuple[ScanBounds, bool]:
    """``bounds`` narrowed by ``f``, and whether ``f`` is then fully applied (Spark need not evaluate it)."""
    attribute: tuple[str, ...] = getattr(f, "attribute", ())
    column = attribute[0] if len(attribute) == 1 else None
    value: Any = getattr(f, "value", None)  # the filter's literal(s): checked by type below before any use
    if isinstance(f, IsNotNull):
        return bounds, column in _NEVER_NULL
    if column == "topic":
        if isinstance(f, (EqualTo, EqualNullSafe)) and isinstance(value, str):
            wanted = frozenset((value,))
        elif isinstance(f, In) and all(isinstance(v, str) for v in value):
            wanted = frozenset(value)
        else:
            return bounds, False
        return replace(bounds, topics=wanted if bounds.topics is None else bounds.topics & wanted), True
    if column in ("partition", "offset"):
        low, end = ("partition_min", "partition_end") if column == "partition" else ("offset_min", "offset_end")
        if isinstance(f, In):
            if not value or not all(_int(v) for v in value):
                return bounds, False
            if column == "partition":
                partitions = frozenset(value)
                return replace(
                    bounds, partitions=partitions if bounds.partitions is None else bounds.partitions & partitions
                ), True
            narrowed = replace(
                bounds, offset_min=max(bounds.offset_min, min(value)), offset_end=min(bounds.offset_end, max(value) + 1)
            )
            return narrowed, len(set(value)) == 1
        if not _int(value):
            return bounds, False
        lo, hi = getattr(bounds, low), getattr(bounds, end)
        if isinstance(f, (EqualTo, EqualNullSafe)):
            lo, hi = max(lo, value), min(hi, value + 1)
        elif isinstance(f, GreaterThan):
            lo = max(lo, value + 1)
        elif isinstance(f, GreaterThanOrEqual):
            lo = max(lo, value)
        elif isinstance(f, LessThan):
            hi = min(hi, value)
        elif isinstance(f, LessThanOrEqual):
            hi = min(hi, value + 1)
        else:
            return bounds, False
        return replace(bounds, **{low: lo, end: max(hi, lo)}), True  # hi < lo: empty
    if column == "timestamp" and isinstance(f, (EqualTo, EqualNullSafe, GreaterThan, GreaterThanOrEqual)):
        ms = _millis_floor(value)
        if ms is not None:
            current = bounds.timestamp_min
            bounds = replace(bounds, timestamp_min=ms if current is None else max(current, ms))
        return bounds, False  # CreateTime is not ordered by offset: Spark still filters
    return bounds, False


class KafkaLogPushdownReader(KafkaLogReader):
    """``KafkaLogReader`` plus filter pushdown (see the module docstring); handed out only when Spark's
    ``spark.sql.python.filterPushdown.enabled`` is on."""

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:
        bounds = ScanBounds()
        remaining = []
        for f in filters:
            bounds, applied = push_filter(f, bounds)
            if not applied:
                remaining.append(f)
        self.bounds = bounds
        return remaining


def _pushdown_enabled_by_planner() -> bool:
    """Whether the PySpark worker planning this read runs with filter pushdown on (see the module docstring)."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename.replace(os.sep, "/")
        if filename.endswith("pyspark/sql/worker/data_source_pushdown_filters.py"):
            return True
        if filename.endswith("pyspark/sql/worker/plan_data_source_read.py") and "enable_pushdown" in frame.f_locals:
            return bool(frame.f_locals["enable_pushdown"])
        frame = frame.f_back
    return False


@dataclass
class KafkaLogCommitMessage(WriterCommitMessage):
    """What one write task sent; ``transaction``: its open transaction of an exactly-once write."""

    records: int
    transaction: TaskTransaction | None = None


class KafkaLogWriter(DataSourceArrowWriter):
    """Batch writer: each task sends its rows with its own ``Producer`` and flushes before reporting success."""

    def __init__(self, options, columns) -> None:
        self.options = options
        self.columns = columns

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaLogCommitMessage:
        if self.options.exactly_once:
            from spark_kafkalog.datasource.stream_source import task_partition_and_batch

            partition, _ = task_partition_and_batch()
            txn = write_task(self.options, self.columns, iterator, partition, None)
            return KafkaLogCommitMessage(txn.records, txn)
        with Producer(client_config(self.options)) as producer:
            writer = RecordWriter(self.options, self.columns, producer)
            for batch in iterator:
                writer.write(batch)
            return KafkaLogCommitMessage(writer.finish())

    def commit(self, messages: list) -> None:
        if self.options.exactly_once:
            rows = end_transactions(self.options, [m.transaction for m in messages if m is not None], commit=True)
            log.info("kafkalog write committed: %d records in transactions", rows)
            return
        total = sum(m.records for m in messages if m is not None)
        log.info("kafkalog write committed: %d records", total)

    def abort(self, messages: list) -> None:
        if self.options.exactly_once:
            end_transactions(self.options, [m.transaction for m in messages if m is not None], commit=False)
            log.warning(
                "kafkalog write aborted; the tasks' transactions were aborted (nothing visible to read_committed)"
            )
            return
        sent = sum(m.records for m in messages if m is not None)
        log.warning(
            "kafkalog write aborted; %d records from successful tasks were already written (at-least-once)", sent
        )


class KafkaLogDataSource(DataSource):
    """``format("kafkalog")``: Spark's Kafka source and sink, without a JVM Kafka client."""

    @classmethod
    def name(cls) -> str:
        return "kafkalog"

    def schema(self) -> StructType:
        include_headers = parse_include_headers(self.options)
        formats = parse_read_formats_only(self.options)
        if formats is None:
            return kafka_schema(include_headers)
        from pyspark.sql.pandas.types import from_arrow_schema

        from spark_kafkalog.datasource.value_formats import read_arrow_schema, resolve_read_formats

        return from_arrow_schema(read_arrow_schema(resolve_read_formats(formats), include_headers))

    def reader(self, schema: StructType) -> KafkaLogReader:
        options, expected = read_schema(parse_source_options(self.options))
        _check_read_schema(options, expected, schema)
        cls = KafkaLogPushdownReader if _pushdown_enabled_by_planner() else KafkaLogReader
        return cls(options)

    def writer(self, schema: StructType, overwrite: bool) -> KafkaLogWriter:
        if overwrite:  # reached where DataFrameWriter.save is not wrapped (SQL INSERT OVERWRITE)
            batch_save_mode("overwrite")
        options = parse_sink_options(self.options)
        if options.exactly_once and options.transactional_id_prefix is None:  # one prefix per batch write
            options = replace(options, transactional_id_prefix=f"kafkalog-batch-{uuid.uuid4().hex[:16]}")
        columns = check_write_schema({f.name: f.dataType.simpleString() for f in schema.fields}, options)
        return KafkaLogWriter(write_options(options, schema), columns)

    # -- Structured Streaming (spark_kafkalog.datasource.stream_source) ---------------------------
    def streamReader(self, schema: StructType):
        """The micro-batch reader. Options are validated here, before the reader is built: PySpark 4.3
        reports an exception from the reader's construction only as ``UnboundLocalError``."""
        from spark_kafkalog.datasource.share_options import is_share_read
        from spark_kafkalog.datasource.stream_options import parse_stream_options
        from spark_kafkalog.datasource.stream_source import KafkaLogStreamReader

        if is_share_read(self.options):
            # a share-group read (``shareGroup``): ``share_source``'s reader
            from spark_kafkalog.datasource.share_options import parse_share_stream_options
            from spark_kafkalog.datasource.share_source import KafkaLogShareStreamReader

            return self._checked_stream_reader(parse_share_stream_options, KafkaLogShareStreamReader, schema)
        return self._checked_stream_reader(parse_stream_options, KafkaLogStreamReader, schema)

    def _checked_stream_reader(
        self, parse: Callable[[Mapping[str, str]], Any], reader: Callable[[Any], Any], schema: StructType
    ) -> Any:
        """``reader`` of the options ``parse`` reads (their ``source`` with the read schema's columns), after the
        Spark schema is checked against them; invalid options give an ``_InvalidStreamReader``."""
        try:
            options = parse(self.options)
            source, expected = read_schema(options.source)
            options = replace(options, source=source)
            _check_read_schema(source, expected, schema)
        except KafkaOptionError as e:
            # PySpark 4.3 reports an exception raised here only as UnboundLocalError ('reader' in
            # python_streaming_source_runner's finally); a reader that raises on its first call shows ours.
            return _InvalidStreamReader(e)
        return reader(options)

    def streamWriter(self, schema: StructType, overwrite: bool):
        """The streaming sink (``writeStream``): the batch sink's columns and options, at-least-once."""
        from spark_kafkalog.datasource.stream_options import parse_stream_sink_options
        from spark_kafkalog.datasource.stream_source import KafkaLogStreamWriter

        options = parse_stream_sink_options(self.options)
        columns = check_write_schema({f.name: f.dataType.simpleString() for f in schema.fields}, options)
        return KafkaLogStreamWriter(write_options(options, schema), columns)


class _InvalidStreamReader(DataSourceStreamReader):
    """The stream reader of invalid options: every call raises the option error (``stop`` excepted)."""

    def __init__(self, error: KafkaOptionError) -> None:
        self.error = error

    def _fail(self, *args):
        raise self.error

    initialOffset = latestOffset = partitions = read = commit = _fail

    def stop(self) -> None:
        pass


def register(spark) -> None:
    """Make ``format("kafkalog")`` available in ``spark`` (a ``SparkSession``).

    A no-op where Spark found the installed ``pyspark_kafkalog`` itself (its static registration, made when
    the session first resolves a Python data source): registering over it would only log Spark's "replaced
    a statically registered data source" warning. Registered at runtime otherwise (the package not visible
    to the workers' interpreter, a Spark Connect session).
    """
    if not _statically_registered(spark):
        spark.dataSource.register(KafkaLogDataSource)


def _statically_registered(spark) -> bool:
    """Whether ``spark``'s data source manager already knows ``kafkalog`` (classic sessions only: asking
    runs Spark's lookup of installed ``pyspark_*`` modules, which any first ``format()`` runs anyway)."""
    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()
        return bool(manager.dataSourceExists(KafkaLogDataSource.name()))
    except Exception:  # Spark Connect (no JVM session here) or a Spark without this manager: register
        return False


def kafkalog_session(
    master: str = "local[2]", app_name: str = "kafkalog", conf: dict | None = None, *, pushdown: bool = False
):
    """A ``SparkSession`` with ``kafkalog`` registered, Python workers on this interpreter and, with
    ``pushdown=True``, Python data source filter pushdown on (``spark.sql.python.filterPushdown.enabled``;
    Spark's default is off).

    ``PYSPARK_PYTHON``/``PYSPARK_DRIVER_PYTHON`` are set to ``sys.executable`` when unset, before the
    session starts: Spark's workers otherwise start whatever ``python3`` is on the PATH, which may lack
    pyarrow or this package. An existing session is reused (its static settings then stay as they were).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {"spark.sql.python.filterPushdown.enabled": "true" if pushdown else "false"}
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark
