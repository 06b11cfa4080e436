"""Real kafka-python and confluent-kafka clients against a real 3-broker cluster on real ZooKeeper."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from tests.waiting import wait_until

from .conftest import new_topic

pytestmark = pytest.mark.integration

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = 1_700_000_000_000


def kp_produce(cluster, topic, n, *, acks, codec, idempotent=False, start=0):
    """Send ``n`` keyed records with headers and explicit timestamps; returns the metadata of acked sends."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks=acks,
        compression_type=None if codec == "none" else codec,
        enable_idempotence=idempotent,
        linger_ms=5,
        batch_size=64 * 1024,
        max_in_flight_requests_per_connection=5 if idempotent else 1,
        retries=5 if idempotent or acks != 0 else 0,
    )
    futures = []
    for i in range(start, start + n):
        futures.append(
            producer.send(
                topic,
                key=b"key-%d" % (i % 257),
                value=b"value-%d-" % i + b"x" * (i % 50),
                headers=[("seq", b"%d" % i), ("codec", codec.encode())],
                timestamp_ms=BASE_TS + i,
            )
        )
    producer.flush(60)
    results = [f.get(30) for f in futures]
    producer.close(10)
    return results


def kp_consume_all(cluster, topic, partitions, expected):
    """Read every partition from the beginning with manual assignment until ``expected`` records arrived."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=cluster.bootstrap_servers,
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=1 << 20,
        fetch_max_wait_ms=100,
    )
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    by_partition = defaultdict(list)

    def read_expected() -> bool:
        for tp, recs in consumer.poll(timeout_ms=500, max_records=10_000).items():
            by_partition[tp.partition].extend(recs)
        return sum(map(len, by_partition.values())) >= expected

    wait_until(read_expected, 120, f"kafka-python to read {expected} records")
    # anything beyond the expected count would be a duplicate: give it a moment to show up
    for tp, recs in consumer.poll(timeout_ms=300).items():
        by_partition[tp.partition].extend(recs)
    consumer.close()
    return by_partition


def check_exactly_once(by_partition, seqs, codec=None):
    seen = {}
    for p, recs in by_partition.items():
        offsets = [r.offset for r in recs]
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets), f"partition {p} out of order"
        for r in recs:
            headers = dict(r.headers)
            i = int(headers["seq"])
            assert i not in seen, f"record {i} delivered twice"
            seen[i] = r
            assert r.key == b"key-%d" % (i % 257)
            assert r.value == b"value-%d-" % i + b"x" * (i % 50)
            assert r.timestamp == BASE_TS + i and r.timestamp_type == 0
            if codec is not None:
                assert headers["codec"] == codec.encode()
    assert sorted(seen) == sorted(seqs), f"{len(seen)} distinct records back, expected {len(seqs)}"


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_every_acks_mode(cluster, codec):
    """acks 0, 1 and all (idempotent) with this codec: every record back once, in order, intact."""
    topic = new_topic(cluster, 3)
    per_mode = 7_000
    kp_produce(cluster, topic, per_mode, acks=0, codec=codec, start=0)
    acked = kp_produce(cluster, topic, per_mode, acks=1, codec=codec, start=per_mode)
    assert all(md.offset >= 0 for md in acked)
    kp_produce(cluster, topic, per_mode, acks="all", codec=codec, idempotent=True, start=2 * per_mode)
    got = kp_consume_all(cluster, topic, 3, 3 * per_mode)
    check_exactly_once(got, range(3 * per_mode), codec)


def test_kafka_python_100k_idempotent(cluster):
    """The headline round trip: 100,000 keyed records with headers, idempotent acks=all, lz4."""
    topic = new_topic(cluster, 6)
    results = kp_produce(cluster, topic, 100_000, acks="all", codec="lz4", idempotent=True)
    assert len({(md.partition, md.offset) for md in results}) == 100_000
    got = kp_consume_all(cluster, topic, 6, 100_000)
    check_exactly_once(got, range(100_000))
    assert len([p for p, recs in got.items() if recs]) == 6


@pytest.mark.parametrize("codec", CODECS)
def test_confluent_kafka_producer_read_by_kafka_python(cluster, codec):
    from confluent_kafka import Producer

    topic = new_topic(cluster, 3)
    errors = []
    p = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "acks": "all",
            "compression.type": codec,
            "linger.ms": 5,
            "enable.idempotence": True,
            "api.version.request": True,
        }
    )
    n = 5_000
    for i in range(n):
        p.produce(
            topic,
            key=b"key-%d" % (i % 257),
            value=b"value-%d-" % i + b"x" * (i % 50),
            headers=[("seq", b"%d" % i), ("codec", codec.encode())],
            timestamp=BASE_TS + i,
            on_delivery=lambda err, msg: errors.append(err) if err else None,
        )
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(60) == 0
    assert errors == []
    got = kp_consume_all(cluster, topic, 3, n)
    check_exactly_once(got, range(n), codec)


def test_list_offsets_by_timestamp_matches_brute_force(cluster):
    """Non-monotonic CreateTime timestamps: offsets_for_times == the first offset with timestamp >= t."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic = new_topic(cluster, 1, segment_bytes=4096)  # several segments, so the time index spans files
    rng = random.Random(7)
    stamps = [BASE_TS + rng.randrange(0, 100_000) for _ in range(3_000)]
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks=1, linger_ms=2, batch_size=2048)
    for i, ts in enumerate(stamps):
        producer.send(topic, value=b"%d" % i, partition=0, timestamp_ms=ts)
    producer.flush(30)
    producer.close()
    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, group_id=None)
    try:
        for target in [
            BASE_TS - 1,
            BASE_TS + 1,
            *(BASE_TS + rng.randrange(0, 100_000) for _ in range(40)),
            BASE_TS + 100_000,
        ]:
            expected = next(((o, ts) for o, ts in enumerate(stamps) if ts >= target), None)
            got = consumer.offsets_for_times({tp: target})[tp]
            if expected is None:
                assert got is None
            else:
                assert (got.offset, got.timestamp) == expected, f"target {target}"
    finally:
        consumer.close()
