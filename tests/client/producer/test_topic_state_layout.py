"""The per-topic state ``send`` keeps (``Producer._topics``): the Python send path and the compiled send of
``_kernels_src/producer.c`` read it at the same indices, the ones ``client.producer.send_path`` names."""

from __future__ import annotations

import time
from collections import deque
from types import SimpleNamespace

import pytest

from spark_kafkalog.client.producer import send_path
from spark_kafkalog.client.producer.producer_batch import _RECORD_OVERHEAD, ProducerBatch, RecordFuture
from spark_kafkalog.client.types import TopicPartition
from spark_kafkalog.records import Compression, default_partition

try:
    from spark_kafkalog import _kernels
except ImportError:  # no compiler at install time: only the Python send exists
    _kernels = None

needs_kernels = pytest.mark.skipif(_kernels is None, reason="spark_kafkalog._kernels is not built")

PYTHON_LAYOUT = {name: getattr(send_path, name) for name in send_path.__all__ if name.startswith("TOPIC_")}


def test_the_python_layout_names_every_index_once():
    indices = sorted(index for name, index in PYTHON_LAYOUT.items() if name != "TOPIC_STATE_SIZE")
    assert indices == list(range(send_path.TOPIC_STATE_SIZE))


@needs_kernels
def test_the_compiled_send_names_the_indices_as_the_python_send_path_does():
    assert hasattr(_kernels, "topic_state_layout"), "spark_kafkalog._kernels predates producer.c: rebuild it"
    assert _kernels.topic_state_layout() == PYTHON_LAYOUT


def _state(tps: list[TopicPartition], next_check_ns: int) -> list:
    state: list = [None] * send_path.TOPIC_STATE_SIZE
    state[send_path.TOPIC_INFO] = object()
    state[send_path.TOPIC_NEXT_CHECK_NS] = next_check_ns
    state[send_path.TOPIC_PARTITION_COUNT] = len(tps)
    state[send_path.TOPIC_AVAILABLE] = [1]  # a list of ints of another length: read as partitions, it fails
    state[send_path.TOPIC_PARTITIONS] = tps
    state[send_path.TOPIC_EXPIRES_AT] = time.monotonic() + 60.0
    return state


@needs_kernels
def test_the_compiled_send_appends_by_a_state_laid_out_with_the_python_names():
    tps = [TopicPartition("events", p) for p in range(3)]
    batches = {tp: ProducerBatch(tp, Compression.NONE, 16384, time.monotonic()) for tp in tps}
    state = _state(tps, time.time_ns() + 60 * 10**9)
    fallback_calls: list[tuple] = []
    context = (
        SimpleNamespace(_closed=False),  # the producer
        SimpleNamespace(fatal_error=None),  # its sender
        {"events": state},
        {tp: deque([batch]) for tp, batch in batches.items()},
        16384,  # batch.size
        1 << 20,  # max.request.size
        _RECORD_OVERHEAD,
        RecordFuture,
        lambda: None,  # the sender's wakeup
        lambda *args, **kwargs: fallback_calls.append(args),  # the Python send
    )
    send = _kernels.make_send(context)
    key = b"key-7"
    future = send("events", b"value", key)
    placed = tps[default_partition(key, len(tps))]
    assert fallback_calls == []
    assert isinstance(future, RecordFuture)
    assert [record[1:] for record in batches[placed].records] == [(key, b"value", ())]
    assert all(not batch.records for tp, batch in batches.items() if tp != placed)

    state[send_path.TOPIC_NEXT_CHECK_NS] = 0  # due for its check against the metadata cache: the Python send's
    send("events", b"value", key)
    assert fallback_calls == [("events", b"value", key)]
    assert len(batches[placed].records) == 1
