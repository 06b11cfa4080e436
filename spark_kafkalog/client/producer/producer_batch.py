"""One partition's batch of records being produced, and the per-record futures it completes.

A ``ProducerBatch`` collects ``(timestamp_ms, key, value, headers)`` tuples as ``Producer.send``
appends them (under the accumulator's lock) and encodes them all at once when the sender closes it
(``records.build_batch``: one pass, compressed once); the sender then stamps the producer id, epoch and
base sequence of an idempotent producer into the header (recomputing the CRC-32C), sends it, and
finally completes it exactly once with the partition's base offset or an error. A batch accepts records
while ``appendable``: until it is full (its estimated size reaches ``batch.size``) or drained.

``RecordFuture`` is a ``concurrent.futures.Future`` look-alike (``result``, ``exception``, ``done``,
``add_done_callback``): a tuple ``(batch, offset delta, timestamp)`` sharing its batch's completion
event, so a record costs one small object and no lock; ``add_done_callback`` functions are kept by the
batch.

Thread-safety: appends happen under the accumulator's lock, everything else on the sender thread;
``RecordFuture`` methods may be called from any thread.
"""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from spark_kafkalog.client.types import RecordMetadata, TopicPartition
from spark_kafkalog.records import Compression, crc32c
from spark_kafkalog.records.batch import BATCH_HEADER_SIZE, TRANSACTIONAL_BIT
from spark_kafkalog.records.batch_builder import build_batch

__all__ = ["DeliveryCallback", "ProducerBatch", "RecordFuture", "append_record", "stamp_producer_state"]

log = logging.getLogger("kafkalog.producer")

DeliveryCallback = Callable[["RecordMetadata | None", "BaseException | None"], None]

# v2 batch header fields rewritten for idempotence (see records.batch): producer_id int64 @43,
# producer_epoch int16 @51, base_sequence int32 @53; CRC-32C @17 covers bytes 21..end.
_PRODUCER_STATE = struct.Struct(">qhi")
_PRODUCER_STATE_OFFSET = 43
_CRC = struct.Struct(">I")
_CRC_OFFSET = 17
_CRC_START = 21
_ATTRIBUTES_LOW_BYTE = 22  # attributes: int16 at 21
# record overhead upper bound: length, attributes, timestamp/offset deltas, key/value lengths, header count
_RECORD_OVERHEAD = 5 + 1 + 10 + 5 + 5 + 5 + 5


try:  # the compiled lock-free append (see accumulator); None: appends take the accumulator's lock
    from spark_kafkalog._kernels import append_record  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # no compiler at install time, or a build from before this kernel
    append_record = None


def _no_wakeup() -> None:
    pass


def stamp_producer_state(
    buf: bytearray, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool = False
) -> None:
    """Write producer id, epoch and base sequence (and the transactional attribute when ``transactional``) into
    the v2 batch ``buf`` and recompute its CRC."""
    _PRODUCER_STATE.pack_into(buf, _PRODUCER_STATE_OFFSET, producer_id, producer_epoch, base_sequence)
    if transactional:
        buf[_ATTRIBUTES_LOW_BYTE] |= TRANSACTIONAL_BIT
    _CRC.pack_into(buf, _CRC_OFFSET, crc32c(memoryview(buf)[_CRC_START:]))


def estimate_record_size(key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes | None]]) -> int:
    size = _RECORD_OVERHEAD + (len(key) if key else 0) + (len(value) if value else 0)
    for k, v in headers:
        size += 10 + len(k) * 4 + (len(v) if v else 0)
    return size


class RecordFuture(tuple):
    """The pending ``RecordMetadata`` of one sent record: ``(batch, offset delta, timestamp)``."""

    __slots__ = ()

    def done(self) -> bool:
        return self[0].done.is_set()

    def cancelled(self) -> bool:
        return False

    def running(self) -> bool:
        return not self.done()

    def cancel(self) -> bool:
        """Records cannot be taken back once sent; always ``False``."""
        return False

    def _metadata(self) -> RecordMetadata:
        batch, delta, timestamp = self
        offset = batch.base_offset + delta if batch.base_offset >= 0 else -1
        if batch.log_append_time >= 0:
            timestamp = batch.log_append_time
        return RecordMetadata(batch.tp.topic, batch.tp.partition, offset, timestamp)

    def result(self, timeout: float | None = None) -> RecordMetadata:
        """Where the record landed; raises its delivery error, or ``TimeoutError`` after ``timeout``."""
        batch = self[0]
        if not batch.done.wait(timeout):
            raise TimeoutError(f"record for {batch.tp} not acknowledged within {timeout}s")
        if batch.error is not None:
            raise batch.error
        return self._metadata()

    def exception(self, timeout: float | None = None) -> BaseException | None:
        batch = self[0]
        if not batch.done.wait(timeout):
            raise TimeoutError(f"record for {batch.tp} not acknowledged within {timeout}s")
        return batch.error

    def add_done_callback(self, fn: Callable[[RecordFuture], None]) -> None:
        """Call ``fn(future)`` once the record is acknowledged or failed (at once when it already is)."""
        batch = self[0]
        with batch.lock:
            if not batch.done.is_set():
                batch.done_callbacks.append((self, fn))
                return
        _safe_call(fn, self)

    def __repr__(self) -> str:
        batch, delta, _ = self
        state = "pending" if not batch.done.is_set() else ("failed" if batch.error is not None else "done")
        return f"RecordFuture({batch.tp}, delta={delta}, {state})"


def _safe_call(fn: Callable, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # a user callback must not kill the sender thread
        log.exception("delivery callback %r raised", fn)


class ProducerBatch:
    """Records for one partition, sent together as one v2 record batch."""

    def __init__(
        self,
        tp: TopicPartition,
        compression: Compression,
        batch_size: int,
        now: float,
        compression_level: int | None = None,
    ) -> None:
        self.tp = tp
        self.compression = compression
        self.compression_level = compression_level  # None: the codec's default (records.compression)
        self.batch_size = batch_size
        self.created = now
        self.records: list[tuple[int, bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]] = []
        self.callbacks: list[tuple[int, int, DeliveryCallback]] = []  # (record index, timestamp, on_delivery)
        self.done_callbacks: list[tuple[RecordFuture, Callable[[RecordFuture], None]]] = []
        self.appendable = True  # False once full or drained (accumulator lock)
        self.full = False
        self.count = 0  # records, once closed
        self.data: bytearray | None = None  # built bytes once closed
        self.attempts = 0
        self.last_attempt = 0.0
        self.retry_after = 0.0
        self.base_sequence = -1
        self.producer_id = -1
        self.producer_epoch = -1
        self.in_flight = False
        self.reserved = 0  # buffer.memory bytes held by this batch (accumulator bookkeeping)
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.estimated_size = BATCH_HEADER_SIZE

    def __len__(self) -> int:
        return self.record_count

    @property
    def record_count(self) -> int:
        return self.count if self.data is not None else len(self.records)

    def try_append(
        self,
        timestamp_ms: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]],
        record_size: int,
        callback: DeliveryCallback | None,
    ) -> RecordFuture | None:
        """Append a record unless the batch is closed or would exceed ``batch.size`` (an empty batch takes
        any record); returns its future or ``None``. ``Producer.send`` inlines the common case."""
        if not self.appendable:
            return None
        records = self.records
        size = self.estimated_size + record_size
        if records and size > self.batch_size:
            self.full = True
            self.appendable = False
            return None
        index = len(records)
        records.append((timestamp_ms, key, value, headers))
        if callback is not None:
            self.callbacks.append((index, timestamp_ms, callback))
        self.estimated_size = size
        if size >= self.batch_size:
            self.full = True
            self.appendable = False
        return RecordFuture((self, index, timestamp_ms))

    def close(self) -> bytearray:
        """Stop appending and build the batch bytes (once); the record tuples are dropped."""
        if self.data is None:
            self._build(-1, -1, -1)
        assert self.data is not None
        return self.data

    def _build(self, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool = False) -> None:
        self.appendable = False
        records = self.records
        self.count = len(records)
        self.data = build_batch(
            records,
            self.compression,
            level=self.compression_level,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            transactional=transactional,
        )
        self.records = []

    @property
    def size_in_bytes(self) -> int:
        return len(self.data) if self.data is not None else self.estimated_size

    def stamp(self, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool = False) -> None:
        """Set the idempotence fields (and the transactional attribute): built with them when not yet built
        (one CRC), else rewritten in place (a prebuilt batch, a re-stamped retry; the CRC is recomputed)."""
        self.producer_id, self.producer_epoch, self.base_sequence = producer_id, producer_epoch, base_sequence
        if self.data is None:
            self._build(producer_id, producer_epoch, base_sequence, transactional)
        else:
            stamp_producer_state(self.data, producer_id, producer_epoch, base_sequence, transactional)

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.record_count - 1

    # completion --------------------------------------------------------------------------------
    def complete(self, base_offset: int, log_append_time: int = -1) -> bool:
        """Acknowledge every record; returns ``False`` when the batch was already completed."""
        return self._finish(base_offset, log_append_time, None)

    def fail(self, error: BaseException) -> bool:
        """Fail every record; returns ``False`` when the batch was already completed."""
        return self._finish(-1, -1, error)

    def _finish(self, base_offset: int, log_append_time: int, error: BaseException | None) -> bool:
        with self.lock:
            if self.done.is_set():
                return False
            self.base_offset = base_offset
            self.log_append_time = log_append_time
            self.error = error
            self.done.set()
        if self.callbacks:
            tp = self.tp
            for index, timestamp, callback in self.callbacks:
                if error is not None:
                    _safe_call(callback, None, error)
                    continue
                offset = base_offset + index if base_offset >= 0 else -1
                if log_append_time >= 0:
                    timestamp = log_append_time
                _safe_call(callback, RecordMetadata(tp.topic, tp.partition, offset, timestamp), None)
        with self.lock:
            done_callbacks, self.done_callbacks = self.done_callbacks, []
        for future, fn in done_callbacks:
            _safe_call(fn, future)
        return True

    def age(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.created

    def __repr__(self) -> str:
        return (
            f"ProducerBatch({self.tp}, records={self.record_count}, sequence={self.base_sequence}, "
            f"attempts={self.attempts})"
        )
