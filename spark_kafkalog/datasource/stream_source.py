"""Structured Streaming classes of ``format("kafkalog")``: the micro-batch reader and the Arrow stream writer.

Where each call runs (PySpark 4.3):

- ``KafkaLogDataSource.streamReader`` validates the options (``stream_options``) before the reader is
  built: PySpark hides an exception raised while it builds a stream reader behind ``UnboundLocalError``.
- The driver starts one Python process per query (``python_streaming_source_runner``) holding one
  ``KafkaLogStreamReader``; Spark calls ``initialOffset``, ``getDefaultReadLimit``,
  ``prepareForTriggerAvailableNow``, ``latestOffset``, ``reportLatestOffset``, ``partitions``,
  ``commit`` and ``stop`` there, one at a time. The reader keeps one ``KafkaClient`` open in that
  process (closed by ``stop``) and a ``StreamPlanner`` with the stream's state.
- ``read`` runs in a task, from a reader Spark builds (and pickles) in a planning worker: it opens its
  own client for its one ``OffsetRange`` and closes it at the end, exactly as the batch read does.
- The writer: ``streamWriter`` (options and columns checked) on the driver; ``write`` in each task with
  its own ``Producer``; ``commit``/``abort`` on the driver with the micro-batch id.

Offsets are Spark's Kafka source JSON (``{"topic":{"0":42}}``) with each topic's id as an entry Spark's parser
reads as a topic without partitions (``stream_planning``, ``topic_ids``), so a checkpoint's ``offsets/<batch>``
files read as Spark's own and a deleted-and-re-created topic is told apart.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxBytes,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from spark_kafkalog.client import KafkaClient, Producer
from spark_kafkalog.client.admin.group_admin import GroupAdmin
from spark_kafkalog.datasource.exactly_once import TaskTransaction, end_transactions, write_task
from spark_kafkalog.datasource.options import SinkOptions
from spark_kafkalog.datasource.planning import OffsetRange
from spark_kafkalog.datasource.scan import client_config, open_client, read_offset_range
from spark_kafkalog.datasource.sink import RecordWriter, WriteColumns
from spark_kafkalog.datasource.stream_options import StreamOptions
from spark_kafkalog.datasource.stream_planning import (
    KafkaStreamSource,
    StreamPlanner,
    from_offset_json,
    offset_topic_ids,
    to_offset_json,
)

__all__ = ["KafkaLogStreamCommitMessage", "KafkaLogStreamReader", "KafkaLogStreamWriter", "StreamInputPartition"]

log = logging.getLogger(__name__)


class StreamInputPartition(InputPartition):
    """One task of a micro-batch: an ``OffsetRange`` of one topic-partition (picklable)."""

    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)

    @property
    def offset_range(self) -> OffsetRange:
        return self.value


class KafkaLogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch reader: Spark's ``KafkaMicroBatchStream`` (see ``stream_planning``) over kafkalog's client.

    With ``options.commit_group`` set (``commitOffsetsToGroup``, or ``kafka.group.id``), the offsets up
    to which the query has processed everything are committed to that consumer group: in ``commit(end)``
    and in ``latestOffset(start, ...)``, whose ``start`` Spark passes only once the batch ending there is
    done (Spark calls ``commit`` for a batch only when it plans the next one, so without the second call
    an idle query's group would trail by a batch). The commit is an OffsetCommit outside the group
    protocol (generation -1, no member id): the query never joins the group, no rebalance happens, and
    ``kafkalog groups describe`` or any lag tool shows its progress. A failed commit is logged and made
    again at the next call: it only feeds monitoring.
    """

    def __init__(self, options: StreamOptions) -> None:
        self.options = options
        self._client: KafkaClient | None = None
        self._planner: StreamPlanner | None = None
        self._committed: dict | None = None

    def __getstate__(self) -> dict:
        return {"options": self.options, "_client": None, "_planner": None, "_committed": None}

    @property
    def planner(self) -> StreamPlanner:
        if self._planner is None:
            self._client = open_client(self.options.source, planning=True)
            self._planner = StreamPlanner(self.options, KafkaStreamSource(self._client, self.options.source.strategy))
        return self._planner

    # -- driver: offsets -------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        offsets = self.planner.initial_offsets()
        return to_offset_json(offsets, self.planner.initial_topic_ids)

    def getDefaultReadLimit(self):
        """The option limits, as one of PySpark's ``ReadLimit``s (PySpark has no composite limit): Spark
        hands it back to ``latestOffset`` (or ``ReadAllAvailable`` for ``Trigger.Once``), and
        ``latestOffset`` then applies every limit option itself."""
        opts = self.options
        if opts.max_offsets_per_trigger is not None:
            return ReadMaxRows(opts.max_offsets_per_trigger)
        if opts.max_bytes_per_trigger is not None:
            return ReadMaxBytes(opts.max_bytes_per_trigger)
        if opts.min_offsets_per_trigger is not None:
            return ReadMinRows(opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.planner.prepare_available_now()

    def latestOffset(self, start: dict, limit) -> dict:
        begin = from_offset_json(start)
        self._commit_to_group(begin)
        planner = self.planner
        end = planner.latest_offset(begin, isinstance(limit, ReadAllAvailable), offset_topic_ids(start))
        return to_offset_json(end, planner.end_topic_ids)

    def reportLatestOffset(self) -> dict | None:
        latest = self.planner.latest
        return None if latest is None else to_offset_json(latest)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        ranges = self.planner.plan(
            from_offset_json(start), from_offset_json(end), offset_topic_ids(start), offset_topic_ids(end)
        )
        return [StreamInputPartition(r) for r in ranges]

    def commit(self, end: dict) -> None:
        self._commit_to_group(from_offset_json(end))

    def _commit_to_group(self, offsets: dict) -> None:
        group = self.options.commit_group
        offsets = {tp: o for tp, o in offsets.items() if o >= 0}
        if group is None or not offsets or offsets == self._committed:
            return
        self.planner  # noqa: B018 - opens the client
        assert self._client is not None, "the planner opens the client"
        try:
            GroupAdmin(self._client).commit_offsets(group, offsets)
        except Exception as e:  # noqa: BLE001 - monitoring only: the next call commits again
            log.warning("could not commit the stream's offsets to consumer group %r: %s", group, e)
            return
        self._committed = offsets

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None
        self._planner = None

    # -- tasks -----------------------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, StreamInputPartition):
            return
        with open_client(self.options.source) as client:
            yield from read_offset_range(self.options.source, partition.offset_range, client)


@dataclass
class KafkaLogStreamCommitMessage(WriterCommitMessage):
    """What one write task of a micro-batch sent (every record acknowledged by the cluster); ``transaction``:
    the task's open transaction of an exactly-once sink, ended by the driver."""

    records: int
    transaction: TaskTransaction | None = None


def task_partition_and_batch() -> tuple[int, int | None]:
    """Spark's partition id of the running task and the micro-batch id Spark sets as the local property
    ``streaming.sql.batchId`` (``None`` outside a micro-batch)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        raise RuntimeError("exactlyOnce: no Spark task context (write() must run in a Spark task)")
    batch = ctx.getLocalProperty("streaming.sql.batchId")
    return ctx.partitionId(), None if batch is None else int(batch)


class KafkaLogStreamWriter(DataSourceStreamArrowWriter):
    """Streaming sink: each task sends its rows with its own ``Producer`` and flushes; any record the
    cluster did not accept fails the task, so Spark fails (or retries) the micro-batch: at-least-once, as
    Spark's Kafka sink.

    ``commit(messages, batchId)`` and ``abort(messages, batchId)`` receive Spark's micro-batch id, which
    increases by one per batch and is reused when Spark runs a batch again after a restart. With
    ``exactlyOnce`` each task writes in a transaction (``exactly_once.write_task``) and ``commit``/``abort``
    end them all (``exactly_once.end_transactions``): exactly-once for read_committed readers.
    """

    def __init__(self, options: SinkOptions, columns: WriteColumns) -> None:
        self.options = options
        self.columns = columns

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaLogStreamCommitMessage:
        if self.options.exactly_once:
            partition, batch_id = task_partition_and_batch()
            if batch_id is None:
                raise RuntimeError("exactlyOnce: Spark did not set streaming.sql.batchId for this task")
            txn = write_task(self.options, self.columns, iterator, partition, batch_id)
            return KafkaLogStreamCommitMessage(txn.records, txn)
        with Producer(client_config(self.options)) as producer:
            writer = RecordWriter(self.options, self.columns, producer)
            for batch in iterator:
                writer.write(batch)
            return KafkaLogStreamCommitMessage(writer.finish())

    def commit(self, messages: list, batchId: int) -> None:
        if self.options.exactly_once:
            rows = end_transactions(self.options, [m.transaction for m in messages if m is not None], commit=True)
            log.info("kafkalog stream write: micro-batch %d committed, %d records in transactions", batchId, rows)
            return
        total = sum(m.records for m in messages if m is not None)
        log.info("kafkalog stream write: micro-batch %d committed, %d records", batchId, total)

    def abort(self, messages: list, batchId: int) -> None:
        if self.options.exactly_once:
            end_transactions(self.options, [m.transaction for m in messages if m is not None], commit=False)
            log.warning("kafkalog stream write: micro-batch %d aborted; its task transactions were aborted", batchId)
            return
        sent = sum(m.records for m in messages if m is not None)
        log.warning(
            "kafkalog stream write: micro-batch %d aborted; %d records from successful tasks were already "
            "written and will be written again if the batch is retried (at-least-once)",
            batchId,
            sent,
        )
