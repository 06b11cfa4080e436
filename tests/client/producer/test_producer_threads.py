"""``Producer.send`` from several threads at once against the in-process broker, in both append modes
(the compiled ``send`` and lock-free ``append_record``, and the pure-Python send and append under the
accumulator's lock):
small batches make the sender drain while the threads append, and every record must land exactly
once, where its future says, in each thread's order per partition, with its callback run once."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

import pytest

from broker.server import EmbeddedBroker
from spark_kafkalog.client import (
    AdminClient,
    KafkaClient,
    NewTopic,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.producer import accumulator, send_path
from spark_kafkalog.client.producer.producer_batch import RecordFuture, append_record

THREADS = 4
PER_THREAD = 3000
PARTITIONS = 3


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    broker = EmbeddedBroker(
        0, zookeeper_connect=f"memory:threads-{uuid.uuid4().hex[:8]}", log_dir=tmp_path_factory.mktemp("b")
    )
    broker.start()
    yield broker.bootstrap_servers
    broker.stop()


@pytest.fixture(params=["compiled", "python"])
def append_mode(request, monkeypatch):
    if request.param == "compiled":
        if append_record is None:
            pytest.skip("spark_kafkalog._kernels is not built (no compiler at install time): only the Python path runs")
    else:
        monkeypatch.setattr(send_path, "append_record", None)
        monkeypatch.setattr(send_path, "compiled_send", None)
        monkeypatch.setattr(accumulator, "append_record", None)
    return request.param


def read_all(bootstrap: str, topic: str) -> dict[int, list]:
    out = {}
    with KafkaClient(bootstrap) as client:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        for tp in tps:
            out[tp.partition] = [r for f in client.fetch_batches(tp, 0, ends[tp]) for r in f.batch.records()]
    return out


def test_concurrent_sends_land_once_each_in_order_where_their_futures_say(bootstrap, append_mode):
    topic = f"threads-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    delivered = Counter()
    lock = threading.Lock()

    def on_delivery(meta, error):
        assert error is None
        with lock:
            delivered[(meta.partition, meta.offset)] += 1

    futures: dict[bytes, RecordFuture] = {}
    with Producer(bootstrap, acks="all", linger_ms=1, batch_size=2048) as producer:

        def produce(thread: int) -> None:
            for i in range(PER_THREAD):
                value = b"%d-%d" % (thread, i)
                # keyed (murmur2; by position: the compiled send's case), null-key (sticky) and explicit
                # partitions interleaved
                if i % 3 == 0:
                    future = producer.send(topic, value, b"k%d" % i)
                    future.add_done_callback(lambda f: on_delivery(f.result(), f.exception()))
                elif i % 3 == 1:
                    future = producer.send(topic, value, on_delivery=on_delivery)
                else:
                    future = producer.send(topic, value, partition=i % PARTITIONS, on_delivery=on_delivery)
                futures[value] = future

        workers = [threading.Thread(target=produce, args=(t,)) for t in range(THREADS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        producer.flush(60)
    assert len(futures) == THREADS * PER_THREAD
    logs = read_all(bootstrap, topic)
    assert sum(len(records) for records in logs.values()) == THREADS * PER_THREAD
    for value, future in futures.items():
        meta = future.result(0)
        assert logs[meta.partition][meta.offset].value == value
    assert set(delivered.values()) == {1} and len(delivered) == THREADS * PER_THREAD
    for records in logs.values():  # each thread's records keep their send order within a partition
        last: dict[int, int] = {}
        for r in records:
            thread, i = map(int, r.value.split(b"-"))
            assert last.get(thread, -1) < i
            last[thread] = i
