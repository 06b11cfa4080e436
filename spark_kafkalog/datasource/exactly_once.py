"""Exactly-once writes (``exactlyOnce`` / ``kafka.transactional.id``): each write task sends its rows inside a
Kafka transaction that it leaves open; the driver's ``commit`` ends every task's transaction with EndTxn
(commit), its ``abort`` with EndTxn (abort). No pyspark here: the callers pass Spark's partition id and
micro-batch id.

Per task (``write_task``):

1. a transactional producer with id ``<prefix>-<Spark partition id>``; ``init_transactions`` fences an
   earlier attempt of the same partition (a failed or zombie task) and aborts the transaction it left open;
2. streaming only: the task reads the *batch marker* of its partition, the committed offset of group
   ``<prefix>.p<partition>`` on partition 0 of the marker topic (``topic`` option, else the topic of the task's
   first row), with ``require_stable``. It is ``batchId + 1`` once this partition's output of the micro-batch
   was committed: the batch is being re-run after a failure between the driver's commits and Spark's commit
   log, so the task writes nothing;
3. ``begin_transaction``, every row sent (``RecordWriter``, acks=all, idempotent), flushed; streaming: the
   marker (``batchId + 1``) sent to the transaction with ``send_offsets_to_transaction``, so it becomes
   visible exactly when the rows do;
4. returns ``TaskTransaction(transactional id, producer id, epoch, rows)``; the transaction stays open.

The driver (``end_transactions``) ends each task's transaction as that producer (``TransactionManager.resume``).
A transaction that the coordinator aborted meanwhile (``transaction.timeout.ms``, default here 15 minutes, or
a newer attempt's fencing) makes the commit fail: Spark fails the batch and, after a restart, runs it again.

Guarantee, for readers with ``isolation.level=read_committed``: every row of a committed micro-batch once,
provided a re-run of a micro-batch gives each Spark partition the rows it had the first time (a deterministic
query over a replayable source such as Kafka: the same offsets, no non-deterministic repartitioning). Limits:
a batch ``write`` (not streaming) is atomic when the driver's commit completes (all tasks' rows or none) but a
job run again writes again; speculative task attempts must stay off (two live attempts of one partition fence
each other); ``read_uncommitted`` readers see aborted attempts' rows too.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa

from spark_kafkalog.client import KafkaClient, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import GroupAdmin, OffsetAndMetadata
from spark_kafkalog.client.config import ClientConfig
from spark_kafkalog.client.producer.transactions import TransactionManager
from spark_kafkalog.datasource.options import SinkOptions
from spark_kafkalog.datasource.scan import client_config
from spark_kafkalog.datasource.sink import KafkaWriteError, RecordWriter, WriteColumns

__all__ = ["TaskTransaction", "end_transactions", "marker_group", "write_task"]

log = logging.getLogger("kafkalog.datasource")

DEFAULT_TRANSACTION_TIMEOUT_MS = 900_000  # the broker's transaction.max.timeout.ms: tasks wait for the driver


@dataclass(frozen=True)
class TaskTransaction:
    """What a task reports to the driver: its open transaction (``transactional_id`` None: nothing to end)."""

    transactional_id: str | None
    producer_id: int
    producer_epoch: int
    records: int
    skipped: bool = False  # the partition's output of this micro-batch was committed before (a re-run)


def marker_group(prefix: str, partition: int) -> str:
    return f"{prefix}.p{partition}"


def _marker_topic(options: SinkOptions, first: pa.RecordBatch) -> str:
    if options.topic is not None:
        return options.topic
    topics = first.column("topic")
    topic = topics[0].as_py() if len(topics) else None
    if not topic:
        raise KafkaWriteError("exactlyOnce: the first row of the task has no topic (and no topic option is set)")
    return topic


def _already_committed(config: ClientConfig, group: str, tp: TopicPartition, batch_id: int) -> bool:
    with KafkaClient(config) as client:
        committed = GroupAdmin(client).list_group_offsets(group, [tp], require_stable=True).get(tp)
    return committed is not None and committed.offset > batch_id


def write_task(
    options: SinkOptions,
    columns: WriteColumns,
    batches: Iterator[pa.RecordBatch],
    partition_id: int,
    batch_id: int | None,
) -> TaskTransaction:
    """One task's rows in a transaction left open for the driver (see the module docstring)."""
    prefix = options.transactional_id_prefix
    assert prefix is not None, "the option parser sets a prefix for exactly-once writes"
    transactional_id = f"{prefix}-{partition_id}"
    config = client_config(options).with_defaults(transaction_timeout_ms=DEFAULT_TRANSACTION_TIMEOUT_MS)
    producer = Producer(config.with_overrides(transactional_id=transactional_id))
    try:
        producer.init_transactions()
        first = next(batches, None)
        while first is not None and not first.num_rows:
            first = next(batches, None)
        if first is None:
            return TaskTransaction(None, -1, -1, 0)  # fenced the previous attempts; nothing to write
        marker = None
        if batch_id is not None:
            marker = (marker_group(prefix, partition_id), TopicPartition(_marker_topic(options, first), 0))
            if _already_committed(config, *marker, batch_id):
                log.info(
                    "%s: micro-batch %d was already committed for this partition; not writing it again",
                    transactional_id,
                    batch_id,
                )
                return TaskTransaction(None, -1, -1, 0, skipped=True)
        producer.begin_transaction()
        writer = RecordWriter(options, columns, producer)
        writer.write(first)
        for batch in batches:
            writer.write(batch)
        rows = writer.finish()
        if marker is not None:
            assert batch_id is not None, "a marker is written for a micro-batch only"
            group, tp = marker
            meta = json.dumps({"batchId": batch_id, "partition": partition_id, "rows": rows})
            producer.send_offsets_to_transaction({tp: OffsetAndMetadata(batch_id + 1, meta)}, group)
        _, producer_id, epoch = producer.transaction_identity
        return TaskTransaction(transactional_id, producer_id, epoch, rows)
    finally:
        producer.close()  # leaves the transaction open: the driver ends it


def end_transactions(options: SinkOptions, tasks: Iterable[TaskTransaction | None], *, commit: bool) -> int:
    """EndTxn for every task's open transaction (commit or abort); returns the rows committed. Raises
    ``KafkaWriteError`` naming the transactions that could not be committed (the batch must be run again)."""
    open_ones = [t for t in tasks if t is not None and t.transactional_id is not None]
    failed = []
    rows = 0
    deadline_s = 120.0
    with KafkaClient(client_config(options)) as client:
        for task in open_ones:
            assert task.transactional_id is not None
            manager = TransactionManager.resume(client, task.transactional_id, task.producer_id, task.producer_epoch)
            started = time.monotonic()
            try:
                manager.end(commit, deadline_s)
                rows += task.records
            except Exception as e:  # every transaction gets its EndTxn; report all failures at once
                failed.append(f"{task.transactional_id} (producer {task.producer_id} epoch {task.producer_epoch}): {e}")
            log.debug("%s: EndTxn(%s) took %.3f s", task.transactional_id, commit, time.monotonic() - started)
    if failed and commit:
        raise KafkaWriteError(
            f"exactlyOnce: {len(failed)} of {len(open_ones)} task transactions could not be committed (aborted by "
            f"the coordinator after transaction.timeout.ms, or fenced by a newer attempt); their rows are not "
            f"visible to read_committed readers and the batch must run again: " + "; ".join(failed)
        )
    for line in failed:
        log.warning("exactlyOnce: abort of %s failed", line)
    return rows
