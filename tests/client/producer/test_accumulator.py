"""The record accumulator: batching by size and linger, draining, memory bound, retries and expiry;
and the producer batch it fills (futures, callbacks, idempotence stamping)."""

from __future__ import annotations

import threading

import pytest

from spark_kafkalog.client.errors import KafkaTimeoutError
from spark_kafkalog.client.producer.accumulator import RecordAccumulator
from spark_kafkalog.client.producer.idempotence import IdempotenceState, increment_sequence
from spark_kafkalog.client.producer.producer_batch import ProducerBatch, estimate_record_size
from spark_kafkalog.client.types import RecordMetadata, TopicPartition
from spark_kafkalog.records import Compression, decode_batch_records, validate_batch

A0 = TopicPartition("a", 0)
A1 = TopicPartition("a", 1)
B0 = TopicPartition("b", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(clock=None, **kw) -> RecordAccumulator:
    kw.setdefault("batch_size", 1000)
    kw.setdefault("linger_ms", 50)
    kw.setdefault("compression", Compression.NONE)
    kw.setdefault("buffer_memory", 1 << 20)
    return RecordAccumulator(clock=clock or Clock(), **kw)


def add(acc, tp, value=b"x" * 100, callback=None, max_block=1.0):
    size = estimate_record_size(None, value, [])
    return acc.append(tp, 5000, None, value, [], size, callback, max_block=max_block)


def leaders(mapping):
    return lambda tp: mapping.get(tp)


def test_a_batch_is_not_sendable_before_linger_unless_full():
    clock = Clock()
    acc = make(clock)
    first = add(acc, A0)
    assert first.new_batch and not first.batch_full
    check = acc.ready(clock.now, leaders({A0: 1}))
    assert check.ready_nodes == set()
    assert check.next_check == pytest.approx(0.05)
    clock.now += 0.05
    assert acc.ready(clock.now, leaders({A0: 1})).ready_nodes == {1}


def test_a_full_batch_is_sendable_at_once_and_later_records_open_a_new_batch():
    clock = Clock()
    acc = make(clock, batch_size=500)
    results = [add(acc, A0) for _ in range(6)]
    assert any(r.batch_full for r in results)
    assert sum(r.new_batch for r in results) == 2
    assert acc.ready(clock.now, leaders({A0: 1})).ready_nodes == {1}
    drained = acc.drain(1, leaders({A0: 1}), 10**6, clock.now)
    assert len(drained) == 1 and drained[0].record_count < 6
    assert not drained[0].appendable  # closed to appends on drain
    assert drained[0].close() == drained[0].data  # built once


def test_drain_takes_one_batch_per_partition_of_the_node_within_max_request_size():
    clock = Clock()
    acc = make(clock, linger_ms=0)
    for tp in (A0, A1, B0):
        add(acc, tp)
    lead = leaders({A0: 1, A1: 1, B0: 2})
    assert acc.ready(clock.now, lead).ready_nodes == {1, 2}
    one = acc.drain(1, lead, 10**6, clock.now)
    assert sorted(b.tp for b in one) == [A0, A1]
    assert acc.drain(1, lead, 10**6, clock.now) == []
    (b0,) = acc.drain(2, lead, 10**6, clock.now)
    assert b0.tp == B0


def test_drain_sends_at_least_one_batch_even_above_max_request_size_and_rotates_partitions():
    clock = Clock()
    acc = make(clock, linger_ms=0)
    add(acc, A0)
    add(acc, A1)
    lead = leaders({A0: 1, A1: 1})
    first = acc.drain(1, lead, 10, clock.now)
    second = acc.drain(1, lead, 10, clock.now)
    assert len(first) == 1 and len(second) == 1
    assert {first[0].tp, second[0].tp} == {A0, A1}


def test_muted_partitions_and_unknown_leaders_are_not_drained():
    clock = Clock()
    acc = make(clock, linger_ms=0)
    add(acc, A0)
    add(acc, B0)
    check = acc.ready(clock.now, leaders({A0: 1}), muted={A0})
    assert check.ready_nodes == set()
    assert check.unknown_leaders == {"b"}


def test_flush_makes_lingering_batches_sendable():
    clock = Clock()
    acc = make(clock, linger_ms=10_000)
    add(acc, A0)
    assert acc.ready(clock.now, leaders({A0: 1})).ready_nodes == set()
    acc.begin_flush()
    assert acc.ready(clock.now, leaders({A0: 1})).ready_nodes == {1}
    acc.end_flush()


def test_append_blocks_on_full_buffer_memory_until_a_batch_is_released():
    clock = Clock()
    acc = make(clock, batch_size=1000, buffer_memory=1000, linger_ms=0)
    add(acc, A0)
    (batch,) = acc.drain(1, leaders({A0: 1}), 10**6, clock.now)
    done = threading.Event()

    def blocked_append():
        add(acc, A1, max_block=5.0)
        done.set()

    worker = threading.Thread(target=blocked_append)
    worker.start()
    assert not done.wait(0.1)
    batch.complete(0)
    acc.release(batch)
    assert done.wait(2.0)
    worker.join()


def test_append_gives_up_after_max_block_when_memory_stays_full():
    acc = make(batch_size=1000, buffer_memory=1000)
    add(acc, A0)
    with pytest.raises(KafkaTimeoutError, match="buffer.memory"):
        acc.append(A1, 1, None, b"x", [], 50, None, max_block=0.05)


def test_reenqueued_batches_are_retried_after_backoff_in_sequence_order():
    clock = Clock()
    acc = make(clock, linger_ms=0)
    batches = []
    for _ in range(3):
        add(acc, A0)
        batches += acc.drain(1, leaders({A0: 1}), 10**6, clock.now)
    for seq, b in enumerate(batches):
        b.stamp(7, 0, seq)
    acc.reenqueue(batches[2], clock.now + 1)
    acc.reenqueue(batches[0], clock.now + 1)
    acc.reenqueue(batches[1], clock.now + 1)
    assert acc.head_sequences(A0) == [0, 1, 2]
    assert acc.ready(clock.now, leaders({A0: 1})).ready_nodes == set()
    clock.now += 1
    assert acc.drain(1, leaders({A0: 1}), 10**6, clock.now) == [batches[0]]


def test_expired_batches_are_removed():
    clock = Clock()
    acc = make(clock)
    add(acc, A0)
    clock.now += 10
    add(acc, B0)
    expired = acc.expired(clock.now, 5.0)
    assert [b.tp for b in expired] == [A0]
    assert acc.has_queued()


def test_batch_futures_report_offsets_timestamps_and_callbacks():
    batch = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    seen = []
    futures = [
        batch.try_append(1000 + i, None, b"v", [], 20, (lambda m, e: seen.append((m, e))) if i == 1 else None)
        for i in range(3)
    ]
    done_callbacks = []
    futures[2].add_done_callback(lambda f: done_callbacks.append(f.result().offset))
    assert not futures[0].done()
    assert batch.complete(40)
    assert not batch.complete(41)  # completes exactly once
    assert [f.result(0).offset for f in futures] == [40, 41, 42]
    assert futures[0].result().timestamp == 1000
    assert seen == [(RecordMetadata("a", 0, 41, 1001), None)]
    assert done_callbacks == [42]
    futures[0].add_done_callback(lambda f: done_callbacks.append("late"))
    assert done_callbacks[-1] == "late"


def test_log_append_time_replaces_record_timestamps_and_errors_reach_everyone():
    batch = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    f = batch.try_append(5, None, b"v", [], 20, None)
    batch.complete(0, log_append_time=777)
    assert f.result().timestamp == 777
    failed = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    errors = []
    g = failed.try_append(5, None, b"v", [], 20, lambda m, e: errors.append((m, e)))
    boom = KafkaTimeoutError("late")
    failed.fail(boom)
    assert g.exception() is boom and errors == [(None, boom)]
    with pytest.raises(KafkaTimeoutError):
        g.result()


def test_a_callback_that_raises_does_not_stop_the_others(caplog):
    batch = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    calls = []
    batch.try_append(1, None, b"v", [], 20, lambda m, e: 1 / 0)
    batch.try_append(1, None, b"v", [], 20, lambda m, e: calls.append(m.offset))
    batch.complete(9)
    assert calls == [10]
    assert "delivery callback" in caplog.text


def test_stamping_producer_state_keeps_the_batch_valid():
    batch = ProducerBatch(A0, Compression.GZIP, 10_000, 0.0)
    for i in range(4):
        batch.try_append(100 + i, b"k", b"value-%d" % i, [("h", b"1")], 40, None)
    batch.stamp(1234, 5, 77)
    header = validate_batch(bytes(batch.data))
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (1234, 5, 77)
    assert [r.value for r in decode_batch_records(bytes(batch.data))] == [b"value-%d" % i for i in range(4)]
    assert batch.last_sequence == 80


def test_sequences_are_assigned_once_per_batch_and_wrap_like_kafka():
    assert increment_sequence(5, 3) == 8
    assert increment_sequence(2**31 - 2, 3) == 1
    state = IdempotenceState()
    state.set_producer_id(9, 0)
    first = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    second = ProducerBatch(A0, Compression.NONE, 10_000, 0.0)
    for b in (first, second):
        for _ in range(3):
            b.try_append(1, None, b"v", [], 20, None)
    state.prepare(first)
    state.prepare(second)
    state.prepare(first)  # a retry keeps its sequence
    assert (first.base_sequence, second.base_sequence) == (0, 3)
    state.request_reset()
    assert not state.has_producer_id
    state.set_producer_id(10, 0)
    state.prepare(second)  # stamped under the old id: re-stamped from 0
    assert (second.producer_id, second.base_sequence) == (10, 0)
