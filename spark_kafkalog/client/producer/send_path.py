"""``Producer.send``'s per-record path, built once per producer as a closure over its settings.

``send`` costs about a microsecond of Python per record, so it reads everything it needs from closure
cells instead of producer attributes, and does per record only: the closed/failed check, one clock
read (the record's CreateTime unless given), the topic's cached partition state (partition count,
partitions with a leader, one ``TopicPartition`` per index; checked against the metadata cache at most
once a millisecond of wall-clock time: a new metadata entry or ``metadata.max.age.ms`` replaces it),
serialisation (bytes and ``None`` pass as they are under the default serializers), placement (Kafka's
murmur2 of a key under the default partitioner, compiled when ``spark_kafkalog._kernels`` is built,
else the partitioner), the size checks, the timestamp, and the append of a ``(timestamp, key, value,
headers)`` tuple to the partition's open batch (compiled and lock-free, or under the accumulator's lock:
see ``accumulator``);
``RecordAccumulator.append`` takes over whenever that batch is missing, closed or full. Records are
encoded with their whole batch when the sender drains it (``records.build_batch``).

With ``spark_kafkalog._kernels`` built, the function returned is the compiled ``make_send`` of
``_kernels_src/producer.c``: ``send(topic, value, key)`` by position with a bytes key, under the
default serializers and partitioner, runs those same steps in C and hands every other call (and any
record whose append needs the slow path) to this module's Python ``send``, unchanged.

Thread-safe as ``Producer.send`` is: the only shared state it writes is under the accumulator's lock,
or in the partitioner (thread-safe) and the per-topic cache (a dict entry replaced whole).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from spark_kafkalog.client.errors import KafkaClientError, RecordTooLargeError
from spark_kafkalog.client.metadata import TopicInfo
from spark_kafkalog.client.producer.partitioner import DefaultPartitioner, UniformStickyPartitioner
from spark_kafkalog.client.producer.producer_batch import (
    _RECORD_OVERHEAD,
    RecordFuture,
    append_record,
    estimate_record_size,
)
from spark_kafkalog.client.producer.producer_parts import ProducerParts
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "TOPIC_AVAILABLE",
    "TOPIC_EXPIRES_AT",
    "TOPIC_INFO",
    "TOPIC_NEXT_CHECK_NS",
    "TOPIC_PARTITIONS",
    "TOPIC_PARTITION_COUNT",
    "TOPIC_STATE_SIZE",
    "check_headers",
    "make_send",
    "partition_state",
]

# A topic's state (``Producer._topics[topic]``): a list, read by ``send`` here and by the compiled send
# (``_kernels_src/producer.c``, whose ``topic_state_layout()`` returns the same indices), replaced whole.
TOPIC_INFO = 0  # the metadata entry (``TopicInfo``) it was built from
TOPIC_NEXT_CHECK_NS = 1  # int, wall-clock ns (``time.time_ns``): from then on ``send`` checks it against the cache
TOPIC_PARTITION_COUNT = 2  # int
TOPIC_AVAILABLE = 3  # list[int]: the partitions with a leader, sorted (the partitioner's ``available``)
TOPIC_PARTITIONS = 4  # list[TopicPartition]: one per partition, by index
TOPIC_EXPIRES_AT = 5  # float, monotonic s: when the entry is ``metadata.max.age.ms`` old
TOPIC_STATE_SIZE = 6

_RECHECK_NS = 1_000_000  # the topic state is checked against the metadata cache at most once a millisecond

try:  # send(topic, value, key)'s common case compiled (see _kernels_src/producer.c make_send)
    from spark_kafkalog._kernels import make_send as compiled_send  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # no compiler at install time, or a build from before this kernel
    compiled_send = None

try:  # Kafka's default partition of one key, compiled (records.murmur2.default_partition is the reference)
    from spark_kafkalog._kernels import key_partition  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # no compiler at install time, or a build from before this kernel
    from spark_kafkalog.records.murmur2 import default_partition as key_partition


def make_send(producer: ProducerParts) -> Callable[..., RecordFuture]:
    """The ``send`` function of ``producer`` (whose accumulator, partitioner, serializers and sender exist)."""
    accumulator = producer._accumulator
    sender = producer._sender
    config = producer.config
    lock_acquire = accumulator.lock.acquire
    lock_release = accumulator.lock.release
    queues_get = accumulator.queues.get
    append_slow = accumulator.append
    batch_size = accumulator.batch_size
    topics = producer._topics
    topics_get = topics.get
    topic_info = producer._topic_info
    peek = producer._client.metadata.peek
    max_age = producer._client.metadata.max_age
    partition_fn = producer._partition
    record_appended = producer._record_appended
    partitioner = getattr(partition_fn, "__self__", None)
    # Kafka's built-in partitioners learn only of the records they placed stickily (as Java's
    # BuiltInPartitioner); a plugged-in partitioner's hook hears of every record.
    builtin = type(partitioner) in (DefaultPartitioner, UniformStickyPartitioner)
    hook_every_record = record_appended if not builtin else None
    hook_sticky = record_appended
    keyed_murmur2 = type(partitioner) is DefaultPartitioner and not partitioner.ignore_keys
    serialize_key = config.key_serializer_for()  # f(obj, topic, headers): Serializer objects get a context
    serialize_value = config.value_serializer_for()
    raw_keys = config.key_serializer is None  # bytes and None pass as they are
    raw_values = config.value_serializer is None
    max_request_size = config.max_request_size
    max_block = config.max_block_ms / 1000.0
    wakeup = sender.wakeup
    monotonic = time.monotonic
    time_ns = time.time_ns

    def current_state(topic: str, state: list | None, now_ns: int) -> list:
        """The topic's partition state, checked against the metadata cache (``TOPIC_NEXT_CHECK_NS``: when
        to check next)."""
        if state is not None and state[TOPIC_INFO] is peek(topic) and monotonic() < state[TOPIC_EXPIRES_AT]:
            state[TOPIC_NEXT_CHECK_NS] = now_ns + _RECHECK_NS
            return state
        info = topic_info(topic)
        count, available, tps = partition_state(topic, info)
        state = [None] * TOPIC_STATE_SIZE
        state[TOPIC_INFO] = info
        state[TOPIC_NEXT_CHECK_NS] = now_ns + _RECHECK_NS
        state[TOPIC_PARTITION_COUNT] = count
        state[TOPIC_AVAILABLE] = available
        state[TOPIC_PARTITIONS] = tps
        state[TOPIC_EXPIRES_AT] = info.fetched_at + max_age
        topics[topic] = state
        return state

    overhead = _RECORD_OVERHEAD
    new_future = RecordFuture
    append_compiled = append_record
    bytes_type = bytes

    def send(
        topic: str,
        value: Any = None,
        key: Any = None,
        *,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
        on_delivery: Any = None,
    ) -> RecordFuture:
        if producer._closed or sender.fatal_error is not None:
            producer._raise_unusable(topic)
        now_ns = time_ns()
        try:
            state = topics_get(topic)
        except TypeError:  # unhashable: not a topic name
            raise ValueError(f"topic must be a non-empty string, got {topic!r}") from None
        if state is None or now_ns >= state[TOPIC_NEXT_CHECK_NS]:
            state = current_state(topic, state, now_ns)
        num_partitions = state[TOPIC_PARTITION_COUNT]
        if (key is None or type(key) is bytes_type) and raw_keys:
            key_bytes = key
        else:
            key_bytes = serialize_key(key, topic, headers)
        if (value is None or type(value) is bytes_type) and raw_values:
            value_bytes = value
        else:
            value_bytes = serialize_value(value, topic, headers)
        header_list = check_headers(headers) if headers else ()
        hook = hook_every_record
        if partition is None:
            if key_bytes is not None and keyed_murmur2:
                partition = key_partition(key_bytes, num_partitions)
            else:
                partition = partition_fn(topic, key_bytes, value_bytes, num_partitions, state[TOPIC_AVAILABLE])
                if type(partition) is not int or not 0 <= partition < num_partitions:
                    raise KafkaClientError(
                        f"partitioner returned {partition!r} for topic {topic} with {num_partitions} partitions",
                        retriable=False,
                        topic=topic,
                    )
                hook = hook_sticky
        elif type(partition) is not int or not 0 <= partition < num_partitions:
            raise KafkaClientError(
                f"partition {partition!r} of topic {topic} does not exist (the topic has {num_partitions} partitions)",
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                retriable=False,
                topic=topic,
                partition=partition if isinstance(partition, int) else None,
            )
        if header_list:
            size = estimate_record_size(key_bytes, value_bytes, header_list)
        else:
            size = overhead
            if key_bytes is not None:
                size += len(key_bytes)
            if value_bytes is not None:
                size += len(value_bytes)
        if size > max_request_size:
            raise RecordTooLargeError(
                f"record of about {size} bytes for {topic}-{partition} exceeds max.request.size ({max_request_size})",
                topic=topic,
                partition=partition,
            )
        if timestamp_ms is None:
            timestamp_ms = now_ns // 1_000_000
        elif type(timestamp_ms) is not int or timestamp_ms < 0:
            raise ValueError(f"timestamp_ms must be a non-negative int (milliseconds), got {timestamp_ms!r}")
        tp = state[TOPIC_PARTITIONS][partition]
        if append_compiled is not None:  # atomic under the GIL: no lock (see accumulator)
            future = append_compiled(
                queues_get(tp),
                batch_size,
                size,
                timestamp_ms,
                key_bytes,
                value_bytes,
                header_list,
                on_delivery,
                new_future,
                wakeup,
            )
            wake = False  # append_record woke the sender if the batch became full
        else:
            future = None
            wake = False
            lock_acquire()
            try:
                queue = queues_get(tp)
                if queue:
                    batch = queue[-1]
                    if batch.appendable:
                        estimated = batch.estimated_size + size
                        if estimated <= batch_size:
                            records = batch.records
                            index = len(records)
                            records.append((timestamp_ms, key_bytes, value_bytes, header_list))
                            batch.estimated_size = estimated
                            if on_delivery is not None:
                                batch.callbacks.append((index, timestamp_ms, on_delivery))
                            if estimated >= batch_size:
                                batch.full = True
                                batch.appendable = False
                                wake = True
                            future = new_future((batch, index, timestamp_ms))
            finally:
                lock_release()
        if future is None:
            result = append_slow(
                tp, timestamp_ms, key_bytes, value_bytes, header_list, size, on_delivery, max_block=max_block
            )
            future = result.future
            wake = result.batch_full or result.new_batch
        if hook is not None:
            hook(topic, partition, size, num_partitions, state[TOPIC_AVAILABLE])
        if wake:
            wakeup()
        return future

    if compiled_send is not None and append_compiled is not None and keyed_murmur2 and raw_keys and raw_values:
        context = (
            producer,
            sender,
            topics,
            accumulator.queues,
            batch_size,
            max_request_size,
            overhead,
            new_future,
            wakeup,
            send,
        )
        return compiled_send(context)
    return send


def partition_state(topic: str, info: TopicInfo) -> tuple[int, list[int], list[TopicPartition]]:
    """``(partition count, partitions with a leader, TopicPartition by index)`` of a metadata entry."""
    count = len(info.partitions)
    available = sorted(p for p, meta in info.partitions.items() if meta.leader >= 0)
    return count, available, [TopicPartition(topic, p) for p in range(count)]


def check_headers(headers: Sequence[tuple[str, Any]] | None) -> list[tuple[str, bytes | None]]:
    """``headers`` as a list of ``(str, bytes | None)`` tuples (bytearray, memoryview and str values
    converted); ``TypeError`` naming the first bad header."""
    if not headers:
        return []
    out = []
    for i, item in enumerate(headers):
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"header {i} must be a (str, bytes | None) pair, got {item!r}") from None
        if not isinstance(key, str):
            raise TypeError(f"header {i} key must be a str, got {type(key).__name__}")
        if value is not None and not isinstance(value, bytes):
            if isinstance(value, (bytearray, memoryview)):
                value = bytes(value)
            elif isinstance(value, str):
                value = value.encode("utf-8")
            else:
                raise TypeError(f"header {key!r} value must be bytes or None, got {type(value).__name__}")
        out.append((key, value))
    return out
