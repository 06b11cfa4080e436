"""The executor side of a write: Arrow batches of rows to Kafka records (no pyspark).

Columns, as Spark's ``KafkaWriter`` accepts them (matched by exact name; other columns are ignored):

    | column    | accepted Spark types                          | record field                           |
    |-----------|-----------------------------------------------|----------------------------------------|
    | value     | string or binary (required)                   | value; null is a tombstone             |
    | key       | string or binary                              | key; missing column or null: no key    |
    | topic     | string (required without the topic option)    | topic; the ``topic`` option overrides  |
    | partition | int                                           | partition; null: the partitioner picks |
    | headers   | array<struct<key:string,value:binary>>        | headers, in order                      |

Strings are sent as UTF-8. Keyed records land where Java producers put them (murmur2, the client's default
partitioner). ``RecordWriter`` is one task's writer: ``write`` sends every row of a batch (raising at
once on a row that cannot become a record, e.g. a null topic, and on the first delivery failure reported
so far); ``finish`` flushes and raises if any record failed, so Spark fails (and retries) the task: no
record is dropped silently. Delivery is at-least-once, as with Spark's sink. Used by one thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from spark_kafkalog.datasource.options import KafkaOptionError, SinkOptions

__all__ = ["KafkaWriteError", "RecordWriter", "WriteColumns", "check_write_schema"]

HEADERS_TYPE = "array<struct<key:string,value:binary>>"


class KafkaWriteError(RuntimeError):
    """A row that cannot be written, or a record the cluster did not accept."""


@dataclass(frozen=True)
class WriteColumns:
    """Which of the recognised columns the DataFrame has (``value`` always)."""

    key: bool = False
    topic: bool = False
    partition: bool = False
    headers: bool = False


def check_write_schema(fields: Mapping[str, str], options: SinkOptions) -> WriteColumns:
    """Spark's ``KafkaWriter.validateQuery`` over ``{column name: Spark simpleString type}``."""
    if "value" not in fields:
        raise KafkaOptionError(
            "Required attribute 'value' not found: the DataFrame to write needs a 'value' column of type string "
            'or binary, e.g. df.selectExpr("CAST(id AS STRING) AS key", "to_json(struct(*)) AS value")'
        )
    for name in ("value", "key"):
        if name in fields and fields[name] not in ("string", "binary"):
            raise KafkaOptionError(
                f"{name} attribute unsupported type {fields[name]}. {name} must be a(n) string or binary, e.g. "
                f"CAST({name} AS STRING) AS {name}"
            )
    topic_column = "topic" in fields and options.topic is None
    if options.topic is None and "topic" not in fields:
        raise KafkaOptionError(
            "topic option required when no 'topic' attribute is present. Use the topic option for setting a "
            'topic, e.g. .option("topic", "events")'
        )
    if topic_column and fields["topic"] != "string":
        raise KafkaOptionError(
            f"topic attribute unsupported type {fields['topic']}. topic must be a(n) string, e.g. CAST(topic AS STRING) AS topic"
        )
    if "partition" in fields and fields["partition"] != "int":
        raise KafkaOptionError(
            f"partition attribute unsupported type {fields['partition']}. partition must be a(n) int, e.g. "
            "CAST(partition AS INT) AS partition"
        )
    if "headers" in fields and fields["headers"] != HEADERS_TYPE:
        raise KafkaOptionError(
            f"headers attribute unsupported type {fields['headers']}. headers must be a(n) {HEADERS_TYPE}, e.g. "
            "array(struct(lit('source') AS key, CAST('etl' AS BINARY) AS value)) AS headers"
        )
    return WriteColumns(
        key="key" in fields, topic=topic_column, partition="partition" in fields, headers="headers" in fields
    )


def _binary_values(batch: pa.RecordBatch, name: str) -> list:
    column = batch.column(name)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.cast(pa.large_binary() if pa.types.is_large_string(column.type) else pa.binary())
    return column.to_pylist()


class RecordWriter:
    """Sends the rows of Arrow batches through ``producer`` (see the module docstring)."""

    def __init__(self, options: SinkOptions, columns: WriteColumns, producer) -> None:
        self.options = options
        self.columns = columns
        self.producer = producer
        self.rows = 0
        self.failed = 0
        self._first_error: BaseException | None = None

    def _on_delivery(self, metadata, error) -> None:
        if error is not None:
            self.failed += 1
            if self._first_error is None:
                self._first_error = error

    def _raise_if_failed(self) -> None:
        if self._first_error is not None:
            raise KafkaWriteError(
                f"{self.failed} record(s) could not be written to Kafka; first error: {self._first_error}"
            ) from self._first_error

    def write(self, batch: pa.RecordBatch) -> None:
        self._raise_if_failed()
        n = batch.num_rows
        if not n:
            return
        cols = self.columns
        values = _binary_values(batch, "value")
        keys = _binary_values(batch, "key") if cols.key else [None] * n
        topics = batch.column("topic").to_pylist() if cols.topic else [self.options.topic] * n
        partitions = batch.column("partition").to_pylist() if cols.partition else [None] * n
        headers = batch.column("headers").to_pylist() if cols.headers else None
        send = self.producer.send
        callback = self._on_delivery
        for i in range(n):
            topic = topics[i]
            if topic is None:
                raise KafkaWriteError(
                    f"null topic present in the data (row {self.rows + i} of this task). Use the topic option for "
                    "setting a topic, or give every row a non-null 'topic'"
                )
            row_headers = None
            if headers is not None and headers[i]:
                row_headers = []
                for h in headers[i]:
                    if h is None or h["key"] is None:
                        raise KafkaWriteError(
                            f"null header or header key in row {self.rows + i} of this task; Kafka header keys are non-null strings"
                        )
                    row_headers.append((h["key"], h["value"]))
            send(topic, values[i], keys[i], partition=partitions[i], headers=row_headers, on_delivery=callback)
        self.rows += n

    def finish(self) -> int:
        """Flush and wait for every record; raises ``KafkaWriteError`` if any failed. Returns the row count."""
        self.producer.flush()
        self._raise_if_failed()
        return self.rows
