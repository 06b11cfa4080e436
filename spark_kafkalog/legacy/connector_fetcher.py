"""The fetcher thread of a ``ConsumerConnector``: fetches the partitions it owns and queues the records for
their streams.

One thread per connector, with its own ``KafkaClient`` (nobody else waits on its connections). Each round
sends one Fetch per partition leader holding every owned partition led there whose stream queue has room
(long-poll ``fetch.wait.max.ms``, ``fetch.min.bytes``, ``fetch.message.max.bytes`` per partition), at the
highest version broker and client share; v0/v1 message sets are converted by the records layer. Records at
or after a partition's fetch offset go into its stream's queue as one ``Chunk``; a full queue blocks only
that partition (it is left out of the next rounds until the stream drains it).

Partition errors: leader moves and unknown partitions refresh the metadata and back off
``refresh.leader.backoff.ms``; OFFSET_OUT_OF_RANGE resets the fetch and consumed offsets to the log start
(``auto.offset.reset=smallest``) or end (``largest``); a message larger than ``fetch.message.max.bytes`` or
a corrupt batch is queued as an error the stream raises. A lost connection refreshes metadata and retries.
``stop()`` ends the thread and joins it; no chunk is queued after it returns.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import defaultdict

from spark_kafkalog.client.core.client import KafkaClient
from spark_kafkalog.client.core.fetcher import fetch_request_for, partition_data, split_fetched
from spark_kafkalog.client.errors import REFRESH_METADATA_ERRORS, KafkaClientError, error_for_code
from spark_kafkalog.client.types import OffsetSpec, TopicPartition
from spark_kafkalog.legacy.kafka_stream import Chunk, PartitionTopicInfo
from spark_kafkalog.legacy.message_set import MessageSizeTooLargeException
from spark_kafkalog.protocol import ApiKey, ErrorCode

__all__ = ["ConnectorFetcher", "MessageSizeTooLargeException"]

log = logging.getLogger(__name__)


class ConnectorFetcher:
    """See the module docstring."""

    def __init__(
        self,
        client: KafkaClient,
        infos: list[PartitionTopicInfo],
        *,
        max_bytes: int,
        wait_ms: int,
        min_bytes: int,
        backoff_ms: int,
        reset: str,
        name: str,
    ) -> None:
        self.client = client
        self.infos = list(infos)
        self._max_bytes = max_bytes
        self._wait_ms = wait_ms
        self._min_bytes = min_bytes
        self._backoff_s = backoff_ms / 1000.0
        self._reset = OffsetSpec.EARLIEST if reset == "smallest" else OffsetSpec.LATEST
        self._stopped = threading.Event()
        self._failed: set[TopicPartition] = set()  # stopped by an error the stream raises
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> ConnectorFetcher:
        if self.infos:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                if not self._round():
                    self._stopped.wait(0.01)
            except KafkaClientError as e:
                log.info("fetch round failed, retrying after %.0f ms: %s", self._backoff_s * 1000, e)
                self.client.metadata.invalidate()
                self._stopped.wait(self._backoff_s)
            except Exception:  # noqa: BLE001 - keep fetching for the other partitions; the log says why
                log.exception("connector fetcher round failed")
                self._stopped.wait(self._backoff_s)

    def _round(self) -> bool:
        """One Fetch per leader; False when no partition could be fetched (all queues full)."""
        by_leader: dict[int, list[PartitionTopicInfo]] = defaultdict(list)
        for info in self.infos:
            tp = TopicPartition(info.topic, info.partition)
            if info.revoked or tp in self._failed or info.chunks.full():
                continue
            by_leader[self.client.leader_for(tp)].append(info)
        if not by_leader:
            return False
        for leader, infos in sorted(by_leader.items()):
            if self._stopped.is_set():
                return True
            self._fetch_from(leader, infos)
        return True

    def _fetch_from(self, leader: int, infos: list[PartitionTopicInfo]) -> None:
        body = fetch_request_for(
            {TopicPartition(i.topic, i.partition): (i.fetched_offset, -1, -1) for i in infos},
            partition_max_bytes=self._max_bytes,
            max_bytes=self._max_bytes * len(infos),
            max_wait_ms=self._wait_ms,
            min_bytes=self._min_bytes,
        )
        _, response = self.client.send_request(ApiKey.FETCH, body, node_id=leader, max_version=12)  # topics by name
        backoff = False
        for info in infos:
            tp = TopicPartition(info.topic, info.partition)
            data = partition_data(response, tp)
            code = data.error_code
            if code == ErrorCode.OFFSET_OUT_OF_RANGE:
                self._reset_offset(info)
                continue
            if code:
                if code in REFRESH_METADATA_ERRORS:
                    self.client.metadata.invalidate(tp.topic)
                    backoff = True
                    continue
                self._fail(info, error_for_code(code, "Fetch", topic=tp.topic, partition=tp.partition))
                continue
            try:
                walk = split_fetched(
                    data.records,
                    tp,
                    info.fetched_offset,
                    None,
                    log_start_offset=data.log_start_offset,
                    high_watermark=data.high_watermark,
                    last_stable_offset=data.last_stable_offset,
                )
            except KafkaClientError as e:
                self._fail(info, e)
                continue
            if not walk.batches and walk.partial_entry_size is not None:
                self._fail(
                    info,
                    MessageSizeTooLargeException(
                        f"{tp} at offset {info.fetched_offset}: an entry of {walk.partial_entry_size} bytes does not "
                        f"fit fetch.message.max.bytes={self._max_bytes}; raise it"
                    ),
                )
                continue
            records = [r for b in walk.batches for r in b.batch.records() if r.offset >= info.fetched_offset]
            if records:
                self._put(info, Chunk(info, records))
            info.fetched_offset = walk.position
        if backoff:
            self._stopped.wait(self._backoff_s)

    def _reset_offset(self, info: PartitionTopicInfo) -> None:
        tp = TopicPartition(info.topic, info.partition)
        offset = self.client.list_offsets({tp: self._reset})[tp]
        log.warning(
            "offset %d of %s is out of range; auto.offset.reset moves it to %d", info.fetched_offset, tp, offset
        )
        info.fetched_offset = offset
        info.consumed_offset = offset

    def _fail(self, info: PartitionTopicInfo, error: BaseException) -> None:
        self._failed.add(TopicPartition(info.topic, info.partition))
        self._put(info, Chunk(info, [], error))

    def _put(self, info: PartitionTopicInfo, chunk: Chunk) -> None:
        while not self._stopped.is_set():
            try:
                info.chunks.put(chunk, timeout=0.1)
                return
            except queue.Full:
                continue
