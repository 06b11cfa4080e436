"""``Consumer``: a simple consumer with manual assignment (no group, no committed offsets).

``assign`` a list of partitions, optionally ``seek``; ``poll`` returns up to ``max_records`` decoded
records (``max.poll.records`` by default), fetching from each assigned partition in turn from its
position. A partition without a position starts per ``auto.offset.reset``: ``latest`` (the default, as in
Java), ``earliest``, or ``none`` (raise). An offset that fell out of the log (retention) is reset the same
way. Keys and values pass through ``key.deserializer``/``value.deserializer`` (bytes by default).
Records are fetched with ``KafkaClient.fetch_batches``, so leader moves and retries are handled there.

Not thread-safe: one thread polls, as with Java's consumer.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from spark_kafkalog.client.client import KafkaClient
from spark_kafkalog.client.config import ClientConfig, _identity
from spark_kafkalog.client.errors import KafkaClientError, OffsetOutOfRangeError
from spark_kafkalog.client.types import ConsumerRecord, OffsetSpec, TopicPartition

__all__ = ["Consumer"]


class Consumer:
    """``Consumer("host:9092", auto_offset_reset="earliest")``; a context manager."""

    def __init__(
        self,
        bootstrap_servers: str | list[str] | Mapping[str, Any] | ClientConfig | None = None,
        config: Mapping[str, Any] | ClientConfig | None = None,
        **kwargs: Any,
    ) -> None:
        self.client = KafkaClient(bootstrap_servers, config, **kwargs)
        cfg = self.client.config
        self.config = cfg
        self._deserialize_key = cfg.key_deserializer or _identity
        self._deserialize_value = cfg.value_deserializer or _identity
        self._assignment: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._buffered: dict[TopicPartition, deque[ConsumerRecord]] = {}
        self._next = 0

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # assignment and positions ------------------------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Replace the assignment; positions of partitions kept in it are kept."""
        tps = list(dict.fromkeys(TopicPartition(*tp) for tp in partitions))
        for tp in tps:
            self.client.leader_for(tp)  # fails early for a partition that does not exist
        self._assignment = tps
        self._positions = {tp: off for tp, off in self._positions.items() if tp in tps}
        self._buffered = {tp: q for tp, q in self._buffered.items() if tp in tps}

    def assignment(self) -> list[TopicPartition]:
        return list(self._assignment)

    def _check_assigned(self, tp: TopicPartition) -> TopicPartition:
        tp = TopicPartition(*tp)
        if tp not in self._assignment:
            raise KafkaClientError(
                f"{tp} is not assigned to this consumer", retriable=False, topic=tp.topic, partition=tp.partition
            )
        return tp

    def seek(self, tp: TopicPartition, offset: int) -> None:
        tp = self._check_assigned(tp)
        if offset < 0:
            raise ValueError(f"seek offset for {tp} must be >= 0, got {offset}")
        self._positions[tp] = offset
        self._buffered.pop(tp, None)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(OffsetSpec.EARLIEST, partitions)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._seek_to(OffsetSpec.LATEST, partitions)

    def _seek_to(self, spec: int, partitions: Iterable[TopicPartition] | None) -> None:
        tps = [self._check_assigned(tp) for tp in (self._assignment if partitions is None else partitions)]
        if not tps:
            return
        for tp, offset in self.client.list_offsets({tp: spec for tp in tps}).items():
            self._positions[tp] = offset
            self._buffered.pop(tp, None)

    def position(self, tp: TopicPartition) -> int:
        """The offset of the next record ``poll`` returns for ``tp``."""
        tp = self._check_assigned(tp)
        if tp not in self._positions:
            self._reset([tp])
        buffered = self._buffered.get(tp)
        return buffered[0].offset if buffered else self._positions[tp]

    def _reset(self, tps: list[TopicPartition]) -> None:
        policy = self.config.auto_offset_reset
        if policy == "none":
            raise KafkaClientError(
                f"no position for {', '.join(map(str, tps))} and auto.offset.reset=none; call seek() first",
                retriable=False,
            )
        spec = OffsetSpec.EARLIEST if policy == "earliest" else OffsetSpec.LATEST
        for tp, offset in self.client.list_offsets({tp: spec for tp in tps}).items():
            self._positions[tp] = offset

    # polling -----------------------------------------------------------------------------------
    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> list[ConsumerRecord]:
        """Up to ``max_records`` records from the assigned partitions, waiting up to ``timeout_ms`` for the
        first one."""
        if not self._assignment:
            return []
        limit = self.config.max_poll_records if max_records is None else max_records
        missing = [tp for tp in self._assignment if tp not in self._positions]
        if missing:
            self._reset(missing)
        deadline = time.monotonic() + timeout_ms / 1000.0
        out: list[ConsumerRecord] = []
        first = True
        while first or (not out and time.monotonic() < deadline):
            remaining_ms = max(0, int((deadline - time.monotonic()) * 1000))
            wait_ms = 0 if first else min(self.config.fetch_max_wait_ms, max(remaining_ms // len(self._assignment), 1))
            first = False
            for i in range(len(self._assignment)):
                tp = self._assignment[(self._next + i) % len(self._assignment)]
                self._take_buffered(tp, out, limit)
                if len(out) >= limit:
                    break
                self._fetch_into(tp, out, limit, wait_ms)
                if len(out) >= limit:
                    break
            self._next = (self._next + 1) % len(self._assignment)
        return out

    def _take_buffered(self, tp: TopicPartition, out: list[ConsumerRecord], limit: int) -> None:
        queue = self._buffered.get(tp)
        while queue and len(out) < limit:
            record = queue.popleft()
            out.append(record)
            self._positions[tp] = record.offset + 1

    def _fetch_into(self, tp: TopicPartition, out: list[ConsumerRecord], limit: int, wait_ms: int) -> None:
        if self._buffered.get(tp):
            return
        position = self._positions[tp]
        try:
            batches = self.client.fetch_batches(tp, position, None, max_wait_ms=wait_ms)
            queue = self._buffered.setdefault(tp, deque())
            for fetched in batches:
                header = fetched.batch.header()
                timestamp_type = header.timestamp_type
                for record in fetched.batch.records():
                    if record.offset < position:
                        continue
                    queue.append(
                        ConsumerRecord(
                            tp.topic,
                            tp.partition,
                            record.offset,
                            record.timestamp,
                            timestamp_type,
                            self._deserialize_key(record.key),
                            self._deserialize_value(record.value),
                            record.headers,
                        )
                    )
                if len(out) + len(queue) >= limit:
                    break
            batches.close()
        except OffsetOutOfRangeError:
            self._buffered.pop(tp, None)
            self._reset([tp])
            return
        self._take_buffered(tp, out, limit)
