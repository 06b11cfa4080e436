"""The micro-batch reader of ``readStream`` with ``shareGroup``: the query reads as a share-group member (KIP-932).

Where each call runs (PySpark 4.3, as ``stream_source``): Spark's one Python process per query
(``python_streaming_source_runner``) holds one ``KafkaLogShareStreamReader``; it keeps a ``ShareMember``
(``share_member``: the client's ``ShareConsumer`` in explicit acknowledgement mode, whose heartbeat thread keeps
the membership between Spark's calls) open until ``stop``. ``read`` runs in a task from a pickled reader without
the member and fetches its topic-partition's acquired offsets with plain Fetch (``share_scan``).

- ``initialOffset``: share batch 0 (nothing acquired; ``share_planning`` has the offset JSON);
- ``getDefaultReadLimit``: ``ReadMaxRows(maxRecordsPerTrigger)``; every limit Spark passes back is applied as
  ``maxRecordsPerTrigger`` (the consumer's ``max_poll_records``): a share batch is never unbounded;
- ``latestOffset(start, limit)``: acknowledges the batches up to ``start`` (done, as Spark passes only a
  finished batch's end) and acquires the next batch (``ShareMember.next_batch``);
- ``partitions(start, end)``: one task per topic-partition of ``end``'s acquired ranges;
- ``commit(end)``: acknowledges the batches up to ``end`` (usually done already by ``latestOffset``);
- ``prepareForTriggerAvailableNow``: the run ends at the first trigger that acquires nothing while polling for
  ``share_member.JOIN_WAIT_MS`` (5 s);
- ``stop``: closes the consumer; records acquired and not yet acknowledged go back to the group.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadMaxRows, SupportsTriggerAvailableNow

from spark_kafkalog.datasource.scan import client_config, open_client
from spark_kafkalog.datasource.share_member import ShareConsumerLike, ShareMember
from spark_kafkalog.datasource.share_options import ShareStreamOptions
from spark_kafkalog.datasource.share_planning import ShareBatchOffset, ShareRange, plan_share_partitions
from spark_kafkalog.datasource.share_scan import read_share_range

__all__ = ["KafkaLogShareStreamReader", "ShareInputPartition", "open_share_consumer"]

log = logging.getLogger(__name__)


def open_share_consumer(options: ShareStreamOptions) -> ShareConsumerLike:
    """The driver's ``ShareConsumer``: the query's ``kafka.*`` settings, explicit acknowledgement mode, polls of
    at most ``maxRecordsPerTrigger`` records."""
    from spark_kafkalog.client.share import ShareConsumer

    config = client_config(options.source).with_defaults(**{"client.id": f"kafkalog-spark-share-{options.group_id}"})
    return ShareConsumer(
        config,
        group_id=options.group_id,
        acknowledgement_mode="explicit",
        max_poll_records=options.max_records_per_trigger,
    )


class ShareInputPartition(InputPartition):
    """One task of a share batch: the acquired offset ranges of one topic-partition (picklable)."""

    def __init__(self, share_range: ShareRange) -> None:
        super().__init__(share_range)

    @property
    def share_range(self) -> ShareRange:
        return self.value


class KafkaLogShareStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch reader of a share group (see the module docstring)."""

    def __init__(self, options: ShareStreamOptions) -> None:
        self.options = options
        self._member: ShareMember | None = None

    def __getstate__(self) -> dict:
        return {"options": self.options, "_member": None}

    @property
    def member(self) -> ShareMember:
        if self._member is None:
            opts = self.options
            self._member = ShareMember(
                opts.group_id,
                opts.topics,
                lambda: open_share_consumer(opts),
                max_wait_ms=opts.max_wait_ms,
                acknowledge_timeout_ms=opts.acknowledge_timeout_ms,
            )
        return self._member

    def _offset(self, value: object) -> ShareBatchOffset:
        return ShareBatchOffset.from_json(value, self.options.group_id)

    # -- driver ----------------------------------------------------------------------------------
    def initialOffset(self) -> dict:
        return self.member.initial_offset().to_json()

    def getDefaultReadLimit(self):
        return ReadMaxRows(self.options.max_records_per_trigger)

    def prepareForTriggerAvailableNow(self) -> None:
        self.member.available_now = True

    def latestOffset(self, start: dict, limit) -> dict:
        return self.member.next_batch(self._offset(start)).to_json()

    def reportLatestOffset(self) -> dict | None:
        return None

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        batch = self._offset(end)
        self.member.note_replayed(batch)
        return [ShareInputPartition(r) for r in plan_share_partitions(batch)]

    def commit(self, end: dict) -> None:
        self.member.acknowledge_through(self._offset(end).batch)

    def stop(self) -> None:
        member, self._member = self._member, None
        if member is not None:
            member.close()

    # -- tasks -----------------------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, ShareInputPartition):
            return
        with open_client(self.options.source) as client:
            yield from read_share_range(self.options.source, partition.share_range, client)
