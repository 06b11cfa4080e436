"""The executor side of a write: Arrow batches of rows to Kafka records (no pyspark).

Columns, as Spark's ``KafkaWriter`` accepts them (matched by exact name; other columns are ignored):

    | column    | accepted Spark types                          | record field                           |
    |-----------|-----------------------------------------------|----------------------------------------|
    | value     | string or binary (required)                   | value; null is a tombstone             |
    | key       | string or binary                              | key; missing column or null: no key    |
    | topic     | string (required without the topic option)    | topic; the ``topic`` option overrides  |
    | partition | int                                           | partition; null: the partitioner picks |
    | headers   | array<struct<key:string,value:binary>>        | headers, in order                      |

With ``valueFormat`` / ``keyFormat`` (Schema Registry formats), ``value`` / ``key`` may be of any Spark type:
``RecordWriter.write`` first encodes them in Confluent's wire format (``value_formats.FormatEncoder``).
Strings are sent as UTF-8. Keyed records land where Java producers put them (murmur2, the client's default
partitioner). ``RecordWriter`` is one task's writer: ``write`` takes a batch and sends the rows pending
once they reach ``COALESCE_BYTES`` (raising on a row that cannot become a record, e.g. a null topic, and
on the first delivery failure reported so far); ``finish`` sends the rest, flushes and raises if any
record failed, so Spark fails (and retries) the task: no record is dropped silently. Delivery is
at-least-once, as with Spark's sink. Used by one thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spark_kafkalog.datasource.options import KafkaOptionError, SinkOptions
from spark_kafkalog.records.columnar import BinaryColumn, header_sections

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
        if options.formats is not None and options.formats.formatted(name):
            continue  # any Spark type: encoded with the column's Schema Registry format (value_formats)
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


COALESCE_BYTES = 4 * 1024 * 1024
"""Arrow bytes of the batches Spark hands a writer that are sent together: Spark's Arrow batches hold
10,000 rows (``spark.sql.execution.arrow.maxRecordsPerBatch``), about 1 MB of 100 B values, and one
``send_batch`` over four of them costs the task about a sixth less CPU than four over one each (fewer
calls, record batches and produce requests)."""


class RecordWriter:
    """Sends the rows of Arrow batches through ``producer`` (see the module docstring).

    Spark's Arrow batches, joined up to ``COALESCE_BYTES``, go out through ``Producer.send_batch`` once per
    topic: keys hashed over the whole column, rows grouped by partition and encoded as whole record batches
    (``records.columnar``), the same partitions and record bytes as per-row ``send``. Record batches hold
    up to ``kafka.batch.size`` bytes when that option is set, else up to 512 KiB, compressed when a codec
    is set (see ``client.producer.batch_producer``).
    """

    def __init__(self, options: SinkOptions, columns: WriteColumns, producer) -> None:
        self.options = options
        self.columns = columns
        self.producer = producer
        self.rows = 0
        self.failed = 0
        self._first_error: BaseException | None = None
        batch_size = options.client_properties.get("batch.size")
        self._batch_bytes = int(batch_size) if batch_size else None
        self._pending: list[pa.RecordBatch] = []
        self._pending_bytes = 0
        self._encoder = None
        if options.formats is not None:  # Schema Registry formats of key/value: framed before anything else
            from spark_kafkalog.datasource.value_formats import FormatEncoder

            self._encoder = FormatEncoder(options.formats)

    def _on_delivery(self, metadata, error) -> None:
        if error is not None:
            self.failed += metadata.record_count if metadata is not None else 1
            if self._first_error is None:
                self._first_error = error

    def _raise_if_failed(self) -> None:
        if self._first_error is not None:
            raise KafkaWriteError(
                f"{self.failed} batch(es) of records could not be written to Kafka; first error: {self._first_error}"
            ) from self._first_error

    def write(self, batch: pa.RecordBatch) -> None:
        """Queue ``batch``'s rows; they are sent once ``COALESCE_BYTES`` are pending (or by ``finish``)."""
        self._raise_if_failed()
        if not batch.num_rows:
            return
        if self._encoder is not None:
            batch = self._encoder.encode(batch, self.options.topic)
        self._pending.append(batch)
        self._pending_bytes += batch.nbytes
        if self._pending_bytes >= COALESCE_BYTES:
            self._send_pending()

    def _send_pending(self) -> None:
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        if pending:
            # one batch of them all (Table.combine_chunks: pa.concat_batches needs a newer pyarrow than ours)
            self._write(
                pending[0] if len(pending) == 1 else pa.Table.from_batches(pending).combine_chunks().to_batches()[0]
            )

    def _write(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        cols = self.columns
        headers = None
        if cols.headers:
            try:
                headers = header_sections(batch.column("headers"))
            except ValueError as e:
                row = int(str(e).split("row ", 1)[1].split(";", 1)[0])
                raise KafkaWriteError(
                    f"null header or header key in row {self.rows + row} of this task; Kafka header keys are "
                    "non-null strings"
                ) from None
        if cols.topic:
            topics = batch.column("topic")
            if topics.null_count:
                row = int(pc.index(pc.is_null(topics), True).as_py())
                raise KafkaWriteError(
                    f"null topic present in the data (row {self.rows + row} of this task). Use the topic option for "
                    "setting a topic, or give every row a non-null 'topic'"
                )
            for topic in pc.unique(topics).to_pylist():
                self._send(
                    batch, topic, np.flatnonzero(pc.equal(topics, topic).to_numpy(zero_copy_only=False)), headers
                )
        else:
            assert self.options.topic is not None, "check_write_schema: no topic column means the topic option"
            self._send(batch, self.options.topic, None, headers)
        self.rows += n

    def _send(self, batch: pa.RecordBatch, topic: str, rows, headers) -> None:
        """Send ``rows`` (all when ``None``) of ``batch`` to ``topic``."""
        if rows is not None and len(rows) != batch.num_rows:
            indices = pa.array(rows)
            batch = batch.take(indices)
            if headers is not None:
                headers = headers.take(indices)
        cols = self.columns
        self.producer.send_batch(
            topic,
            batch.column("value"),
            batch.column("key") if cols.key else None,
            partition=batch.column("partition") if cols.partition else None,
            headers=None if headers is None else BinaryColumn.of(headers),
            on_delivery=self._on_delivery,
            batch_bytes=self._batch_bytes,
        )

    def finish(self) -> int:
        """Send what is pending, flush and wait for every record; raises ``KafkaWriteError`` if any failed.
        Returns the row count."""
        self._send_pending()
        self.producer.flush()
        self._raise_if_failed()
        return self.rows
