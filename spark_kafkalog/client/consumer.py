"""``Consumer``: a consumer with manual assignment, and committed offsets when it has a ``group.id``.

``assign`` a list of partitions, optionally ``seek``; ``poll`` returns up to ``max_records`` decoded
records (``max.poll.records`` by default), fetching from each assigned partition in turn from its
position. A partition without a position starts at the group's committed offset (with a ``group.id``),
else per ``auto.offset.reset``: ``latest`` (the default, as in Java), ``earliest``, or ``none`` (raise).
An offset that fell out of the log (retention) is reset the same way.

With a ``group.id``, ``commit`` stores positions (or given offsets) at the group's coordinator and
``committed`` reads them back; with ``enable.auto.commit`` (the default, as Java) positions are committed
every ``auto.commit.interval.ms`` from ``poll`` and on ``close``. Like Java's consumer with ``assign``,
this commits outside the group protocol (generation -1), which Kafka accepts while the group has no
active members. Keys and values pass through ``key.deserializer``/``value.deserializer`` (bytes by default).
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
from spark_kafkalog.client.group_admin import GroupAdmin, OffsetAndMetadata
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
        self._groups = GroupAdmin(self.client)
        self._last_auto_commit = time.monotonic()

    def close(self) -> None:
        try:
            if self._auto_commits:
                self.commit()
        finally:
            self.client.close()

    # committed offsets (group.id) ----------------------------------------------------------------
    @property
    def _auto_commits(self) -> bool:
        return self.config.group_id is not None and self.config.enable_auto_commit and bool(self._positions)

    def _group(self) -> str:
        if self.config.group_id is None:
            raise KafkaClientError("committed offsets need a group.id", retriable=False)
        return self.config.group_id

    def commit(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None) -> None:
        """Commit ``offsets`` (by default the position of every assigned partition that has one) for the group."""
        group = self._group()
        if offsets is None:
            offsets = {tp: self.position(tp) for tp in self._assignment if tp in self._positions}
        self._groups.commit_offsets(group, {TopicPartition(*tp): v for tp, v in offsets.items()})
        self._last_auto_commit = time.monotonic()

    def committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offset of each partition (None where nothing was committed)."""
        tps = [TopicPartition(*tp) for tp in partitions]
        found = self._groups.list_group_offsets(self._group(), tps)
        return {tp: found.get(tp) for tp in tps}

    def _maybe_auto_commit(self) -> None:
        if (
            self._auto_commits
            and time.monotonic() - self._last_auto_commit >= self.config.auto_commit_interval_ms / 1000
        ):
            self.commit()

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

    def _reset(self, tps: list[TopicPartition], *, use_committed: bool = True) -> None:
        if use_committed and self.config.group_id is not None:
            committed = self._groups.list_group_offsets(self.config.group_id, tps)
            for tp, om in committed.items():
                self._positions[tp] = om.offset
            tps = [tp for tp in tps if tp not in committed]
            if not tps:
                return
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
        self._maybe_auto_commit()
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
            self._reset([tp], use_committed=False)
            return
        self._take_buffered(tp, out, limit)
