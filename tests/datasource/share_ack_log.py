"""A ``kafkalog`` source whose share-group reads log every acknowledgement the driver made (for the end-to-end
tests): ``logged_share_source(path)`` returns a data source class ("kafkalog_share_logged") whose stream reader's
``ShareMember`` appends one JSON line per acknowledged batch to ``path``::

    {"pid": 123, "batch": 4, "accepted": [[partition, offset], ...], "refused": [[partition, offset], ...]}

and one per poll that returned records: ``{"pid": 123, "time": ..., "polled": [[partition, offset, delivery count], ...]}``.

``accepted``: offsets the broker acknowledged (never to be delivered again); ``refused``: offsets of partitions
whose acknowledgement the broker refused (their locks had expired: delivered again). The classes are built in a
function so that Spark pickles them by value into its stream runner process.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def logged_share_source(path: str):
    from spark_kafkalog.datasource.offsets import TopicPartition
    from spark_kafkalog.datasource.share_member import AcknowledgeResult, ShareMember
    from spark_kafkalog.datasource.share_source import KafkaLogShareStreamReader, open_share_consumer
    from spark_kafkalog.datasource.source import KafkaLogDataSource

    class LoggedShareMember(ShareMember):
        def acknowledge_through(self, batch: int) -> AcknowledgeResult:
            owed = {b: list(records) for b, records in self.ledger.items() if b <= batch}
            result = super().acknowledge_through(batch)
            with open(path, "a") as f:
                for b, records in sorted(owed.items()):
                    refused = [[p, o] for t, p, o in records if TopicPartition(t, p) in result.failed]
                    accepted = [[p, o] for t, p, o in records if TopicPartition(t, p) not in result.failed]
                    f.write(json.dumps({"pid": os.getpid(), "batch": b, "accepted": accepted, "refused": refused}))
                    f.write("\n")
            return result

    class LoggedConsumer:
        def __init__(self, consumer) -> None:
            self.consumer = consumer

        def __getattr__(self, name: str):
            return getattr(self.consumer, name)

        def poll(self, timeout_ms: int):
            records = self.consumer.poll(timeout_ms)
            if records:
                polled = [[r.partition, r.offset, r.delivery_count] for r in records]
                with open(path, "a") as f:
                    f.write(json.dumps({"pid": os.getpid(), "time": time.time(), "polled": polled}) + "\n")
            return records

    class LoggedShareReader(KafkaLogShareStreamReader):
        @property
        def member(self) -> ShareMember:
            if self._member is None:
                opts = self.options
                self._member = LoggedShareMember(
                    opts.group_id,
                    opts.topics,
                    lambda: LoggedConsumer(open_share_consumer(opts)),
                    max_wait_ms=opts.max_wait_ms,
                    acknowledge_timeout_ms=opts.acknowledge_timeout_ms,
                )
            return self._member

    class LoggedShareSource(KafkaLogDataSource):
        @classmethod
        def name(cls) -> str:
            return "kafkalog_share_logged"

        def streamReader(self, schema):
            reader = super().streamReader(schema)
            return LoggedShareReader(reader.options) if isinstance(reader, KafkaLogShareStreamReader) else reader

    return LoggedShareSource


def read_ack_log(path: Path) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(accepted, refused) (partition, offset)s of an acknowledgement log (none when it does not exist)."""
    accepted: set[tuple[int, int]] = set()
    refused: set[tuple[int, int]] = set()
    if path.exists():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if "polled" in entry:
                continue
            accepted |= {(p, o) for p, o in entry["accepted"]}
            refused |= {(p, o) for p, o in entry["refused"]}
    return accepted, refused
