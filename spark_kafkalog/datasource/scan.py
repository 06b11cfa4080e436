"""The executor side of a read: one offset range of one partition, fetched and decoded into Arrow (no pyspark).

``read_offset_range(options, offset_range, client)`` yields ``pyarrow.RecordBatch``es of
``kafka_schema(options.include_headers)``, each holding up to about ``TARGET_ROWS`` records or
``TARGET_BYTES`` of record data, and starting with a new fetch response once ``MIN_ROWS`` are pending
when ``BatchDecoder.wants_build_before`` says so (uncompressed record data is then decoded where the
response holds it, without a copy, and the response's pooled buffer is free for the next one). Data loss
(reference section 3.5, executor part) is handled as Spark's ``KafkaDataConsumer`` does. A range's
``EARLIEST``/``LATEST`` sentinels (late binding) are resolved by ListOffsets when the task starts.

- the range's start was deleted by retention (the fetch answers OFFSET_OUT_OF_RANGE): with
  ``failOnDataLoss`` the read fails naming the offsets; without it, it continues from the log start
  offset (or ends, when the log now starts past the range);
- the partition now ends before the range does (truncated, or the topic was deleted and recreated since
  planning): one ListOffsets at task start sees it; same choice;
- the topic or partition no longer exists (deleted since the query was planned): data loss, and with
  ``failOnDataLoss=false`` the task reads nothing;
- gaps inside the range (compaction, transaction markers, aborted transactions) are normal and skipped;
- no progress for ``kafkaConsumer.pollTimeoutMs`` raises the client's ``KafkaTimeoutError``.

``open_client`` builds the client a task (or the driver) uses; each task opens and closes its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pyarrow as pa

from spark_kafkalog.client import ClientConfig, KafkaClient, KafkaClientError, OffsetOutOfRangeError, OffsetSpec
from spark_kafkalog.datasource.arrow_decode import BatchDecoder
from spark_kafkalog.datasource.offsets import EARLIEST, LATEST
from spark_kafkalog.datasource.options import SinkOptions, SourceOptions
from spark_kafkalog.datasource.planning import OffsetRange, check_range, report_data_loss
from spark_kafkalog.protocol import ErrorCode

__all__ = ["TARGET_BYTES", "TARGET_ROWS", "client_config", "open_client", "read_offset_range"]

TARGET_ROWS = 65_536
"""Records per Arrow batch handed to Spark (fewer when ``TARGET_BYTES`` is reached first)."""
TARGET_BYTES = 16 * 1024 * 1024
"""Decompressed record bytes per Arrow batch."""
MIN_ROWS = 4096
"""Records decoded together at least: uncompressed batches of one fetch response are decoded in place, so
a new response starts a new Arrow batch once this many records are pending (compressed ones, compiled,
are decoded across responses up to ``TARGET_ROWS`` / ``TARGET_BYTES``)."""

# Defaults for settings the user did not give as kafka.* options: a larger per-partition fetch than the
# Java consumer's 1 MiB (one task reads one partition, so fewer, larger fetches are cheaper) and the OS's
# socket receive buffer (autotuned) instead of the 64 KiB Spark forces: both nearly double the read rate.
_READ_DEFAULTS = {
    "client.id": "kafkalog-spark",
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
    "receive.buffer.bytes": -1,
}
_WRITE_DEFAULTS = {"client.id": "kafkalog-spark-writer"}


def client_config(options: SourceOptions | SinkOptions, *, planning: bool = False) -> ClientConfig:
    """The client settings of ``options`` (``kafka.*``), with the data source's defaults for the rest.

    ``planning``: the driver's offset lookups retry ``fetchOffset.numRetries`` times,
    ``fetchOffset.retryIntervalMs`` apart (unless ``kafka.retries`` / ``kafka.retry.backoff.ms`` say
    otherwise), as Spark's driver does. Java client keys that mean nothing here are accepted silently.
    """
    defaults = dict(_READ_DEFAULTS if isinstance(options, SourceOptions) else _WRITE_DEFAULTS)
    if planning:
        assert isinstance(options, SourceOptions), "only a read plans offsets"
        defaults.update(
            {
                "retries": options.fetch_offset_retries,
                "retry.backoff.ms": options.fetch_offset_retry_interval_ms,
                "retry.backoff.max.ms": options.fetch_offset_retry_interval_ms,
            }
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ClientConfig.from_kafka_properties(options.client_properties).with_defaults(**defaults)


def open_client(options: SourceOptions, *, planning: bool = False) -> KafkaClient:
    """A client for the driver's planning (``planning=True``) or for one read task."""
    return KafkaClient(client_config(options, planning=planning))


def read_offset_range(
    options: SourceOptions, offset_range: OffsetRange, client: KafkaClient
) -> Iterator[pa.RecordBatch]:
    """Records ``[start, end)`` of one partition as Arrow batches (see the module docstring), with the
    ``key``/``value`` columns decoded when ``options.formats`` gives them a format (``value_formats``)."""
    batches = _read_records(options, offset_range, client)
    if options.formats is None:
        yield from batches
        return
    from spark_kafkalog.datasource.value_formats import FormatDecoder

    decoder = FormatDecoder(options.formats)
    for batch in batches:
        yield decoder.decode(batch)


def _read_records(options: SourceOptions, offset_range: OffsetRange, client: KafkaClient) -> Iterator[pa.RecordBatch]:
    """The records of ``read_offset_range`` in Spark's Kafka schema (binary key and value)."""
    tp = offset_range.topic_partition
    start, end = offset_range.start, offset_range.end
    if 0 <= end <= start:
        return
    try:
        if start == EARLIEST:  # late binding, as Spark's tasks resolve the sentinels
            start = client.list_offsets({tp: OffsetSpec.EARLIEST})[tp]
        latest = client.list_offsets({tp: OffsetSpec.LATEST})[tp]
    except KafkaClientError as e:
        if e.error_code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            raise
        report_data_loss(
            f"Cannot fetch offsets [{start}, {end}) of {tp}: the topic or partition no longer exists (deleted "
            f"since the query was planned: {e})",
            options.fail_on_data_loss,
        )
        return
    if end == LATEST:
        end = latest
        check_range(tp, start, end)
        if start >= end:
            return
    elif latest < end:
        report_data_loss(
            f"Cannot fetch offsets [{max(start, latest)}, {end}) of {tp}: the partition now ends at offset {latest} "
            "(truncated, or the topic was deleted and recreated since the query was planned)",
            options.fail_on_data_loss,
        )
        end = latest
    decoder = BatchDecoder(tp.topic, tp.partition, start, end, include_headers=options.include_headers)
    position = start
    while position < end:
        try:
            for fetched in client.fetch_batches(tp, position, end, timeout_ms=options.poll_timeout_ms):
                data = fetched.batch.data
                if decoder.records >= MIN_ROWS and decoder.wants_build_before(data):
                    yield from _built(decoder)  # the next response starts: decode this one in place
                decoder.add(data)
                position = fetched.batch.last_offset + 1
                if decoder.records >= TARGET_ROWS or decoder.size >= TARGET_BYTES:
                    yield from _built(decoder)
            break
        except OffsetOutOfRangeError as e:
            if e.log_start_offset <= position:
                raise
            report_data_loss(
                f"Cannot fetch offset {position} of {tp}: the log now starts at offset {e.log_start_offset} "
                f"(offsets [{position}, {min(e.log_start_offset, end)}) were deleted)",
                options.fail_on_data_loss,
            )
            yield from _built(decoder)  # records read before the deletion are kept
            # A batch may still hold deleted records below the new log start: filter them too.
            position = decoder.start = e.log_start_offset
    yield from _built(decoder)


def _built(decoder: BatchDecoder) -> Iterator[pa.RecordBatch]:
    batch = decoder.build()
    if batch is not None:
        yield batch
