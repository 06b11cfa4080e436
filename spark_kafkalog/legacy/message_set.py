"""The SimpleConsumer's results: ``ByteBufferMessageSet`` (one partition's fetched bytes), ``MessageAndOffset``,
``Message``, ``MultiFetchResponse``, and the exceptions a partition's error code turns into.

A ``ByteBufferMessageSet`` wraps the record data of one partition of a Fetch response. Iterating it yields a
``MessageAndOffset`` for every message of every complete entry, whatever its format (message sets of magic
0/1, compressed wrappers included, or record batches v2), skipping messages before the fetch offset (a
compressed entry may start before it); a partial trailing entry is ignored, as the seeds describe
(``valid_bytes`` counts the complete entries' bytes, ``size`` all of them). A set whose partition failed
raises its error when iterated (``raise_for_error``), as 0.8's did. Message sets are immutable; iterate
from any thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from spark_kafkalog.client.errors import KafkaClientError, OffsetOutOfRangeError, error_for_code
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import CorruptRecordError, decode_legacy_entry, iter_batches, validate_batch
from spark_kafkalog.records.batch_reader import decode_batch_records

__all__ = [
    "ByteBufferMessageSet",
    "Message",
    "MessageAndOffset",
    "MessageSizeTooLargeException",
    "MultiFetchResponse",
    "NotLeaderForPartitionException",
    "OffsetOutOfRangeException",
    "UnknownTopicOrPartitionException",
]


class OffsetOutOfRangeException(OffsetOutOfRangeError):
    """The fetch offset is outside the partition's log; ``log_start_offset``/``high_watermark`` are -1 when
    the broker could not tell them."""


class NotLeaderForPartitionException(KafkaClientError):
    """The broker the SimpleConsumer talks to does not lead the partition (ask the cluster's metadata)."""


class UnknownTopicOrPartitionException(KafkaClientError):
    """The broker knows no such topic or partition."""


class MessageSizeTooLargeException(KafkaClientError):
    """No complete message fits in the fetch's ``max_size`` (SimpleConsumer) or ``fetch.message.max.bytes``
    (ConsumerConnector): raise it to at least the size reported; the consumer cannot progress otherwise."""


class Message(NamedTuple):
    """One message: ``magic`` 0/1/2 as fetched, ``timestamp`` -1 for magic 0, ``compression`` the codec of its
    entry (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""

    key: bytes | None
    value: bytes | None
    timestamp: int
    magic: int
    compression: int

    @property
    def payload(self) -> bytes | None:
        """The seeds' name of ``value``."""
        return self.value


class MessageAndOffset(NamedTuple):
    message: Message
    offset: int
    next_offset: int  # the offset to fetch from after this message


class ByteBufferMessageSet:
    """The messages fetched for one partition (see the module docstring)."""

    def __init__(
        self,
        buffer: bytes,
        *,
        topic: str = "",
        partition: int = -1,
        fetch_offset: int = 0,
        error_code: int = 0,
        high_watermark: int = -1,
        error: KafkaClientError | None = None,
    ) -> None:
        self.buffer = bytes(buffer or b"")
        self.topic = topic
        self.partition = partition
        self.fetch_offset = fetch_offset
        self.error_code = ErrorCode(error_code)
        self.high_watermark = high_watermark
        self._error = error
        try:
            self.valid_bytes = sum(view.size for view in iter_batches(self.buffer))
        except CorruptRecordError as e:
            raise _corrupt(self, e) from None

    @property
    def size(self) -> int:
        """Bytes received for the partition, a partial trailing entry included."""
        return len(self.buffer)

    def raise_for_error(self) -> None:
        """Raise the partition's error (``OffsetOutOfRangeException``, ``NotLeaderForPartitionException``, ...)."""
        if self._error is not None:
            raise self._error
        if self.error_code != ErrorCode.NONE:
            raise partition_error(self.error_code, self.topic, self.partition, self.fetch_offset)

    def __iter__(self) -> Iterator[MessageAndOffset]:
        self.raise_for_error()
        try:
            for view in iter_batches(self.buffer):
                if view.magic == 2:
                    data = view.data
                    header = validate_batch(data)  # CRC-32C
                    if header.is_control:
                        continue
                    codec = header.attributes & 0x07
                    records = decode_batch_records(data, header=header)
                else:
                    entry = decode_legacy_entry(view.data)
                    codec, records = entry.compression, entry.records
                for r in records:
                    if r.offset >= self.fetch_offset:
                        message = Message(r.key, r.value, r.timestamp, view.magic, codec)
                        yield MessageAndOffset(message, r.offset, r.offset + 1)
        except CorruptRecordError as e:
            raise _corrupt(self, e) from None

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return (
            f"ByteBufferMessageSet(topic={self.topic!r}, partition={self.partition}, fetch_offset={self.fetch_offset}, "
            f"size={self.size}, valid_bytes={self.valid_bytes}, error={self.error_code.name})"
        )


class MultiFetchResponse:
    """The message sets of a ``multifetch``, in the order of its requests; iterable and indexable."""

    def __init__(self, message_sets: list[ByteBufferMessageSet]) -> None:
        self._sets = list(message_sets)

    def __iter__(self) -> Iterator[ByteBufferMessageSet]:
        return iter(self._sets)

    def __getitem__(self, index: int) -> ByteBufferMessageSet:
        return self._sets[index]

    def __len__(self) -> int:
        return len(self._sets)


def partition_error(
    code: int, topic: str, partition: int, offset: int, *, broker: str | None = None, valid: Any = None
) -> KafkaClientError:
    """The exception for a partition's Fetch error code; ``valid`` is (log start, high watermark) when known."""
    where = f"{topic}-{partition}" + (f" on broker {broker}" if broker else "")
    if code == ErrorCode.OFFSET_OUT_OF_RANGE:
        start, end = valid if valid is not None else (-1, -1)
        known = f": the log holds offsets [{start}, {end})" if start >= 0 and end >= 0 else ""
        return OffsetOutOfRangeException(
            f"offset {offset} of {where} is out of range{known}",
            topic=topic,
            partition=partition,
            offset=offset,
            log_start_offset=start,
            high_watermark=end,
        )
    if code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
        return NotLeaderForPartitionException(
            f"broker does not lead {where}: send the fetch to the partition's leader (see the cluster's metadata)",
            error_code=code,
            broker=broker,
            topic=topic,
            partition=partition,
        )
    if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
        return UnknownTopicOrPartitionException(
            f"no topic-partition {where}", error_code=code, broker=broker, topic=topic, partition=partition
        )
    return error_for_code(code, "Fetch", broker=broker, topic=topic, partition=partition)


def _corrupt(message_set: ByteBufferMessageSet, e: CorruptRecordError) -> KafkaClientError:
    return KafkaClientError(
        f"corrupt message data fetched from {message_set.topic}-{message_set.partition} "
        f"at offset {message_set.fetch_offset}: {e}",
        error_code=ErrorCode.CORRUPT_MESSAGE,
        retriable=False,
        topic=message_set.topic,
        partition=message_set.partition,
    )
