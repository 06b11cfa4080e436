"""kafkalog's Producer, Consumer and AdminClient against Apache Kafka 3.9 (ZooKeeper mode) and 4.4 (KRaft)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from spark_kafkalog.client import (
    AdminClient,
    CommitFailedError,
    Consumer,
    KafkaClient,
    NewTopic,
    OffsetSpec,
    Producer,
    TopicPartition,
)
from spark_kafkalog.client.admin.admin_configs import TOPIC, AlterConfigOp, ConfigResource
from tests.waiting import wait_until

from .conftest import new_topic

pytestmark = pytest.mark.compat

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
BASE_TS = int(time.time() * 1000) - 3_600_000  # an hour ago: inside any retention, as timestamps go


def produce(bootstrap: str, topic: str, n: int, *, start: int = 0, partition: int | None = None, **config):
    """Send ``n`` keyed records with headers and timestamps; returns their RecordMetadata in send order."""
    with Producer(bootstrap, linger_ms=5, **config) as producer:
        futures = [
            producer.send(
                topic,
                b"value-%d-" % i + b"x" * (i % 40),
                key=b"key-%d" % i,
                partition=partition,
                timestamp_ms=BASE_TS + i,
                headers=[("seq", b"%d" % i)],
            )
            for i in range(start, start + n)
        ]
        producer.flush(60)
        return [f.result(30) for f in futures]


def read_all(bootstrap: str, topic: str, partitions: int, expected: int, **config) -> list:
    """Everything in the topic by manual assignment from the beginning, once ``expected`` records arrived."""
    with Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100, **config) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        records: list = []
        deadline = time.monotonic() + 60
        while len(records) < expected and time.monotonic() < deadline:
            records.extend(consumer.poll(500))
        records.extend(consumer.poll(300))  # a duplicate would show here
        return records


@pytest.mark.parametrize("codec", CODECS)
def test_producer_records_read_back_by_assign(kafka, codec):
    topic = new_topic(kafka.bootstrap_servers, 2)
    n = 300
    sent = produce(kafka.bootstrap_servers, topic, n, compression_type=codec, acks="all")
    records = read_all(kafka.bootstrap_servers, topic, 2, n)
    assert len(records) == n
    by_seq = {int(dict(r.headers)["seq"]): r for r in records}
    assert sorted(by_seq) == list(range(n))
    for i, meta in enumerate(sent):
        r = by_seq[i]
        assert (r.key, r.value, r.timestamp) == (b"key-%d" % i, b"value-%d-" % i + b"x" * (i % 40), BASE_TS + i)
        assert (r.partition, r.offset) == (meta.partition, meta.offset)
    for p in range(2):
        offsets = [r.offset for r in records if r.partition == p]
        assert offsets == list(range(len(offsets)))


def test_idempotent_producer_writes_each_record_once_in_order(kafka):
    topic = new_topic(kafka.bootstrap_servers, 1)
    sent = produce(kafka.bootstrap_servers, topic, 500, enable_idempotence=True, acks="all", max_in_flight=5)
    assert [m.offset for m in sent] == list(range(500))
    records = read_all(kafka.bootstrap_servers, topic, 1, 500)
    assert [r.key for r in records] == [b"key-%d" % i for i in range(500)]


def test_transactional_commit_visible_and_abort_hidden_for_read_committed(kafka):
    topic = new_topic(kafka.bootstrap_servers, 2)
    with Producer(kafka.bootstrap_servers, transactional_id=f"tx-{uuid.uuid4().hex[:8]}", linger_ms=5) as producer:
        producer.init_transactions()
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            for i in range(20):
                producer.send(topic, b"%s-%d" % (outcome.encode(), i), key=b"k%d" % i)
            producer.flush(30)
            if outcome == "commit":
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    committed = read_all(kafka.bootstrap_servers, topic, 2, 40, isolation_level="read_committed")
    assert sorted(r.value for r in committed) == sorted([b"commit-%d" % i for i in range(20)] * 2)
    everything = read_all(kafka.bootstrap_servers, topic, 2, 60, isolation_level="read_uncommitted")
    assert sorted(r.value for r in everything) == sorted(
        [b"commit-%d" % i for i in range(20)] * 2 + [b"abort-%d" % i for i in range(20)]
    )
    # control batches (markers) take offsets: three transactions leave three markers in each written partition
    with KafkaClient(kafka.bootstrap_servers) as client:
        ends = client.list_offsets({TopicPartition(topic, p): OffsetSpec.LATEST for p in range(2)})
    written = {r.partition for r in everything}
    assert sum(ends.values()) == 60 + 3 * len(written)


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_drained_consumer_is_positioned_at_the_end_past_markers(kafka, isolation):
    topic = new_topic(kafka.bootstrap_servers, 1)
    tp = TopicPartition(topic, 0)
    with Producer(kafka.bootstrap_servers, transactional_id=f"tx-{uuid.uuid4().hex[:8]}") as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"kept")
        producer.commit_transaction()
        producer.begin_transaction()
        producer.send(topic, b"dropped")
        producer.flush(30)
        producer.abort_transaction()
    with KafkaClient(kafka.bootstrap_servers) as client:
        end = client.list_offsets({tp: OffsetSpec.LATEST})[tp]
    assert end == 4  # kept, commit marker, dropped, abort marker
    with Consumer(kafka.bootstrap_servers, isolation_level=isolation, fetch_max_wait_ms=50) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        values: list = []
        wait_until(lambda: values.extend(r.value for r in consumer.poll(100)) or consumer.position(tp) == end, 20)
    assert values == ([b"kept"] if isolation == "read_committed" else [b"kept", b"dropped"])


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_group_consumers_split_partitions_and_commit(kafka, assignor):
    topic = new_topic(kafka.bootstrap_servers, 4)
    n = 200
    produce(kafka.bootstrap_servers, topic, n)
    group = f"g-{uuid.uuid4().hex[:8]}"
    config = dict(
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        partition_assignment_strategy=assignor,
        session_timeout_ms=10000,
        heartbeat_interval_ms=500,
        fetch_max_wait_ms=100,
    )
    consumers = [Consumer(kafka.bootstrap_servers, **config) for _ in range(2)]
    seen: list[list] = [[], []]
    stop = threading.Event()

    def run(i: int) -> None:
        # each member polls and closes in its own thread: a member that stopped polling without leaving
        # would hold the other's JoinGroup for the whole rebalance timeout (as with Java's consumer)
        try:
            consumers[i].subscribe([topic])
            while not stop.is_set():
                seen[i].extend(consumers[i].poll(200))
                if seen[i]:
                    try:
                        consumers[i].commit()
                    except CommitFailedError:  # a rebalance began: the next poll rejoins, as with Java's consumer
                        pass
        finally:
            consumers[i].close()

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(2)]
    try:
        for t in threads:
            t.start()
        wait_until(lambda: sum(map(len, seen)) >= n and all(c.assignment() for c in consumers), 60, "both members")
        # both members still owning disjoint halves once settled
        assignments = wait_until(
            lambda: (a := [set(c.assignment()) for c in consumers])[0] and a[1] and not a[0] & a[1] and a, 30
        )
        assert assignments[0] | assignments[1] == {TopicPartition(topic, p) for p in range(4)}
        with AdminClient(kafka.bootstrap_servers) as admin:
            wait_until(lambda: sum(o.offset for o in admin.list_group_offsets(group).values()) == n, 30, "commits")
            description = wait_until(
                lambda: (d := admin.describe_groups([group])[group]).state == "Stable" and len(d.members) == 2 and d,
                60,  # cooperative-sticky may run a follow-up rebalance first; a loaded machine is slow
                "a stable group of two",
            )
            assert description.protocol == assignor
            assert group in {g.group_id for g in admin.list_groups()}
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    # at least once: a commit refused by a rebalance may hand a record to the other member again
    values = [r.value for part in seen for r in part]
    assert set(values) == {b"value-%d-" % i + b"x" * (i % 40) for i in range(n)} and len(values) >= n


def test_admin_topics_partitions_configs(kafka):
    bootstrap = kafka.bootstrap_servers
    name = f"admin-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, 2, 1, {"retention.ms": "3600000", "cleanup.policy": "compact"})])
        assert name in admin.list_topics()
        description = admin.describe_topics([name])[name]
        assert description.num_partitions == 2
        assert all(p.leader == kafka.broker_id and p.replicas == (kafka.broker_id,) for p in description.partitions)
        configs = admin.describe_configs(name)
        assert (configs["retention.ms"], configs["cleanup.policy"]) == ("3600000", "compact")
        admin.create_partitions({name: 5})
        wait_until(lambda: admin.describe_topics([name])[name].num_partitions == 5, 30, "5 partitions")
        resource = ConfigResource(TOPIC, name)
        admin.incremental_alter_configs({resource: [AlterConfigOp("retention.ms", "7200000")]})
        assert admin.describe_configs(name, keys=["retention.ms"])["retention.ms"] == "7200000"
        admin.alter_configs({resource: {"cleanup.policy": "delete"}})
        after = admin.describe_configs(name)
        # AlterConfigs replaces the whole set: retention.ms falls back to the broker default (7 days)
        assert (after["cleanup.policy"], after["retention.ms"]) == ("delete", "604800000")
        admin.delete_topics([name])
        wait_until(lambda: name not in admin.list_topics(), 30, "the topic deleted")


def test_list_offsets_and_delete_records(kafka):
    topic = new_topic(kafka.bootstrap_servers, 1)
    produce(kafka.bootstrap_servers, topic, 100)
    tp = TopicPartition(topic, 0)
    with AdminClient(kafka.bootstrap_servers) as admin, KafkaClient(kafka.bootstrap_servers) as client:
        assert client.list_offsets({tp: OffsetSpec.EARLIEST})[tp] == 0
        assert client.list_offsets({tp: OffsetSpec.LATEST})[tp] == 100
        # by timestamp: the first record whose timestamp is at or after BASE_TS + 42
        found = client.list_offsets_with_timestamps({tp: BASE_TS + 42})[tp]
        assert tuple(found)[:2] == (42, BASE_TS + 42)
        low = admin.delete_records({tp: 30})
        assert low[tp] == 30
        assert client.list_offsets({tp: OffsetSpec.EARLIEST})[tp] == 30
    records = read_all(kafka.bootstrap_servers, topic, 1, 70)
    assert [r.offset for r in records] == list(range(30, 100))
