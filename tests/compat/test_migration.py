"""Migration both ways: Apache Kafka 3.9 (ZooKeeper mode) and kafkalog taking over each other's log dir and chroot.

One broker writes a scenario (a topic of three partitions in several segments, a compacted topic, a topic
with committed and aborted transactions, a group's committed offsets, topic configs), stops cleanly, and the
other starts with the same ``broker.id``, the same ``log.dirs`` and the same ``zookeeper.connect`` chroot.
kafkalog's clients then check that everything is served as written: every record at its offset with its
key, value, headers and timestamp, read_committed skipping the aborted transaction, the group's offsets,
the topic configs and topic ids; and that the new broker appends after the old log end.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.client import AdminClient, Consumer, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
from tests.waiting import wait_until

from .kafka_broker import KafkaBroker
from .peers import KAFKA_39

pytestmark = pytest.mark.compat

BROKER_ID = 7
BASE_TS = int(time.time() * 1000) - 3_600_000
# The cleaner must not compact while the test compares records: a day of compaction lag keeps every segment
# (timestamps are an hour old) out of reach of either broker's cleaner.
SMALL_SEGMENTS = {"segment.bytes": "1024", "index.interval.bytes": "1"}
TOPIC_CONFIGS = {
    "plain": {**SMALL_SEGMENTS, "retention.ms": "86400000"},
    "compacted": {**SMALL_SEGMENTS, "cleanup.policy": "compact", "min.compaction.lag.ms": "86400000"},
    "txn": {**SMALL_SEGMENTS},
}
PARTITIONS = {"plain": 3, "compacted": 1, "txn": 1}
# Both brokers' internal topics must agree (the group coordinator hashes group ids over the partition count).
KAFKALOG_SETTINGS = dict(
    offsets_topic_num_partitions=4,
    offsets_topic_replication_factor=1,
    transaction_state_log_num_partitions=4,
    transaction_state_log_replication_factor=1,
    transaction_state_log_min_isr=1,
    group_initial_rebalance_delay_ms=0,
    transaction_abort_timed_out_transaction_cleanup_interval_ms=500,
)
# The internal topics' configs as Kafka 3.9 creates them (with the harness's min ISR of 1).
INTERNAL_TOPIC_CONFIGS = {
    "__consumer_offsets": {"compression.type": "producer", "cleanup.policy": "compact", "segment.bytes": "104857600"},
    "__transaction_state": {
        "compression.type": "uncompressed",
        "cleanup.policy": "compact",
        "min.insync.replicas": "1",
        "segment.bytes": "104857600",
        "unclean.leader.election.enable": "false",
    },
}
KAFKA_SETTINGS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"}


@dataclass
class Written:
    """What the first broker was given: records by partition, committed offsets, topic names."""

    topics: dict[str, str]
    group: str
    records: dict[TopicPartition, list[tuple]] = field(default_factory=dict)
    committed: dict[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)
    aborted_values: set[bytes] = field(default_factory=set)
    end_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)
    txn_identity: tuple[str, int, int] = ("", -1, -1)  # transactional id, producer id, epoch
    member_group: str = ""  # a group that had a subscribed member (GroupMetadataValue with a generation)
    member_group_description: tuple = ()
    committed_by_member: dict[TopicPartition, OffsetAndMetadata] = field(default_factory=dict)


def _record(r) -> tuple:
    return (r.offset, r.key, r.value, tuple(r.headers), r.timestamp)


def write_scenario(bootstrap: str) -> Written:
    suffix = uuid.uuid4().hex[:8]
    w = Written(topics={kind: f"mig-{kind}-{suffix}" for kind in TOPIC_CONFIGS}, group=f"mig-group-{suffix}")
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(w.topics[k], PARTITIONS[k], 1, dict(c)) for k, c in TOPIC_CONFIGS.items()])
    plain, compacted, txn = (w.topics[k] for k in ("plain", "compacted", "txn"))
    with Producer(bootstrap, acks="all", linger_ms=2, compression_type="lz4") as producer:
        for i in range(240):
            producer.send(
                plain,
                b"value-%d-" % i + b"x" * (i % 50),
                key=b"key-%d" % i,
                partition=i % 3,
                timestamp_ms=BASE_TS + i,
                headers=[("seq", b"%d" % i), ("kind", b"plain")],
            )
            if i % 10 == 0:
                producer.flush(30)  # many small batches: several segments per partition
        for i in range(120):
            producer.send(compacted, b"v%d" % i, key=b"k%d" % (i % 12), timestamp_ms=BASE_TS + i, headers=[("n", b"1")])
            if i % 10 == 0:
                producer.flush(30)
        producer.flush(60)
    with Producer(bootstrap, transactional_id=f"mig-tx-{suffix}", linger_ms=2) as producer:
        producer.init_transactions()
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            for i in range(15):
                value = b"%s-%d" % (outcome.encode(), i)
                producer.send(txn, value, key=b"t%d" % i, timestamp_ms=BASE_TS + i, headers=[("o", outcome.encode())])
                if outcome == "abort":
                    w.aborted_values.add(value)
            producer.flush(30)
            producer.commit_transaction() if outcome == "commit" else producer.abort_transaction()
        w.txn_identity = producer.transaction_identity
    partitions = [TopicPartition(t, p) for k, t in w.topics.items() for p in range(PARTITIONS[k])]
    with KafkaClient(bootstrap) as client:
        w.end_offsets = client.list_offsets({tp: OffsetSpec.LATEST for tp in partitions})
    for tp in partitions:
        w.records[tp] = [_record(r) for r in read(bootstrap, tp, w.end_offsets[tp], "read_uncommitted")]
    assert sum(len(v) for k, v in w.records.items() if k.topic == plain) == 240
    assert len(w.records[TopicPartition(txn, 0)]) == 45
    w.committed = {
        TopicPartition(plain, 0): OffsetAndMetadata(17, "first"),
        TopicPartition(plain, 1): OffsetAndMetadata(42, None),
        TopicPartition(plain, 2): OffsetAndMetadata(w.end_offsets[TopicPartition(plain, 2)], "end"),
        TopicPartition(txn, 0): OffsetAndMetadata(16, "after the first commit"),
    }
    with Consumer(bootstrap, group_id=w.group, enable_auto_commit=False) as consumer:
        consumer.commit(w.committed)
    w.member_group = f"mig-members-{suffix}"
    compacted0 = TopicPartition(compacted, 0)
    with Consumer(
        bootstrap, group_id=w.member_group, enable_auto_commit=False, auto_offset_reset="earliest", fetch_max_wait_ms=50
    ) as consumer:
        consumer.subscribe([compacted])
        wait_until(lambda: consumer.poll(100) and consumer.assignment(), 30, "a member with records")
        consumer.commit({compacted0: OffsetAndMetadata(60, "member")})
    w.committed_by_member = {compacted0: OffsetAndMetadata(60, "member")}
    with AdminClient(bootstrap) as admin:
        w.member_group_description = describe_group(admin, w.member_group)
        assert w.member_group_description[:2] == ("Empty", "consumer"), w.member_group_description
        w.topic_ids = {t: str(admin.describe_topics([t])[t].topic_id) for t in w.topics.values()}
    return w


def describe_group(admin: AdminClient, group: str) -> tuple:
    d = admin.describe_groups([group])[group]
    return (d.state, d.protocol_type, d.protocol, d.members)


def read(bootstrap: str, tp: TopicPartition, end: int, isolation: str) -> list:
    """Everything of ``tp`` from offset 0 until the consumer's position reaches ``end``."""
    with Consumer(bootstrap, isolation_level=isolation, fetch_max_wait_ms=50) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        out: list = []
        deadline = time.monotonic() + 60
        while consumer.position(tp) < end and time.monotonic() < deadline:
            out.extend(consumer.poll(200))
        assert consumer.position(tp) == end, f"{tp}: stuck at {consumer.position(tp)} of {end}"
        return out


def check_scenario(bootstrap: str, w: Written, broker_id: int) -> None:
    """Everything in ``w`` served by the broker at ``bootstrap`` (the one that took over)."""
    with KafkaClient(bootstrap) as client:
        assert client.list_offsets({tp: OffsetSpec.LATEST for tp in w.end_offsets}) == w.end_offsets
        assert set(client.list_offsets({tp: OffsetSpec.EARLIEST for tp in w.end_offsets}).values()) == {0}
    for tp, expected in w.records.items():
        assert [_record(r) for r in read(bootstrap, tp, w.end_offsets[tp], "read_uncommitted")] == expected, tp
    txn = TopicPartition(w.topics["txn"], 0)
    committed = [r.value for r in read(bootstrap, txn, w.end_offsets[txn], "read_committed")]
    assert committed == [b"commit-%d" % i for i in range(15)] * 2
    assert not w.aborted_values & set(committed)
    with AdminClient(bootstrap) as admin:
        # a null metadata is stored as "" (both brokers, as Kafka does)
        assert admin.list_group_offsets(w.group) == {
            tp: replace(o, metadata=o.metadata or "") for tp, o in w.committed.items()
        }
        for kind, topic in w.topics.items():
            configs = admin.describe_configs(topic, keys=list(TOPIC_CONFIGS[kind]))
            assert configs == TOPIC_CONFIGS[kind], topic
            description = admin.describe_topics([topic])[topic]
            assert str(description.topic_id) == w.topic_ids[topic]
            assert [(p.leader, p.replicas) for p in description.partitions] == [(broker_id, (broker_id,))] * len(
                description.partitions
            )
    # the group that had a member: as the first broker described it once the member left; a new member
    # resumes at its commit
    with AdminClient(bootstrap) as admin:
        assert describe_group(admin, w.member_group) == w.member_group_description
        assert admin.list_group_offsets(w.member_group) == w.committed_by_member
    compacted0 = TopicPartition(w.topics["compacted"], 0)
    with Consumer(bootstrap, group_id=w.member_group, enable_auto_commit=False, fetch_max_wait_ms=50) as consumer:
        consumer.subscribe([compacted0.topic])
        first = wait_until(lambda: consumer.poll(100), 30, "records for the returning group")
        assert first[0].offset == 60
    # the transaction coordinator loaded __transaction_state: the same transactional id keeps its producer id,
    # its epoch bumped (a coordinator without it would hand out a new producer id at epoch 0)
    transactional_id, producer_id, epoch = w.txn_identity
    with Producer(bootstrap, transactional_id=transactional_id) as producer:
        producer.init_transactions()
        assert producer.transaction_identity == (transactional_id, producer_id, epoch + 1)
    w.txn_identity = (transactional_id, producer_id, epoch + 1)
    # the new broker appends after the old log end (kept in ``w`` for a migration back)
    plain0 = TopicPartition(w.topics["plain"], 0)
    after = (b"k", b"after", (("after", b"1"),), BASE_TS + 1000)
    with Producer(bootstrap, acks="all") as producer:
        meta = producer.send(
            plain0.topic, after[1], key=after[0], partition=0, headers=list(after[2]), timestamp_ms=after[3]
        ).result(30)
    assert meta.offset == w.end_offsets[plain0]
    w.records[plain0].append((meta.offset, *after))
    w.end_offsets[plain0] += 1


def znodes(connect: str, w: Written, broker_id: int) -> dict[str, dict]:
    """The JSON of the nodes both brokers write: the cluster id, the broker's registration, a topic's
    assignment and one partition's state, and the topic's configs."""
    zk = KazooClient(hosts=connect)
    zk.start(timeout=10)
    try:
        topic = w.topics["compacted"]
        paths = {
            "cluster": "/cluster/id",
            "registration": f"/brokers/ids/{broker_id}",
            "topic": f"/brokers/topics/{topic}",
            "state": f"/brokers/topics/{topic}/partitions/0/state",
            "config": f"/config/topics/{topic}",
            **{name: f"/config/topics/{name}" for name in INTERNAL_TOPIC_CONFIGS},
        }
        return {name: json.loads(zk.get(path)[0]) for name, path in paths.items()}
    finally:
        zk.stop()
        zk.close()


def check_znodes(before: dict[str, dict], after: dict[str, dict]) -> None:
    """The second broker kept the cluster id, the topic id, assignment, configs and partition state, and
    registered itself with the fields of its kind (values such as the port and timestamp differ)."""
    assert after["cluster"] == before["cluster"]
    assert after["topic"]["topic_id"] == before["topic"]["topic_id"]
    assert after["topic"]["partitions"] == before["topic"]["partitions"]
    assert after["config"]["config"] == before["config"]["config"]
    # both register version 5 (ZkData's layout: "features", KIP-584, and the listener protocol map) with the same
    # fields (the node is ephemeral: each broker writes its own, so a migration is not affected)
    assert before["registration"]["version"] == after["registration"]["version"] == 5
    assert set(before["registration"]) == set(after["registration"])
    assert before["registration"]["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert after["registration"]["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert sorted(after["state"]) == sorted(before["state"])
    assert after["state"]["leader"] == before["state"]["leader"]
    assert after["state"]["isr"] == before["state"]["isr"]
    for name, config in INTERNAL_TOPIC_CONFIGS.items():  # whoever created them
        assert after[name]["config"] == config, name


def check_meta_properties(log_dir: Path, cluster_id: str, broker_id: int) -> None:
    """Kafka's ``meta.properties`` (which kafkalog neither writes nor reads) names the cluster of ``/cluster/id``."""
    lines = (log_dir / "meta.properties").read_text().splitlines()
    props = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert props == {"version": "0", "broker.id": str(broker_id), "cluster.id": cluster_id}


# Kafka's loggers of the log dir's contents and of the coordinators loading __consumer_offsets and
# __transaction_state (its connection warnings while the controller reaches its own broker are left out)
STORAGE_LOGGERS = ("(kafka.log.", "(org.apache.kafka.storage.", "(kafka.server.checkpoints.", "(kafka.coordinator.")


def kafka_warnings(kafka: KafkaBroker) -> list[str]:
    """Kafka's WARN and ERROR lines about the log dir: naming it, or from a storage or coordinator logger."""
    return [
        line
        for line in kafka.server_log.read_text(errors="replace").splitlines()
        if (" WARN " in line or " ERROR " in line)
        and (str(kafka.log_dir) in line or any(logger in line for logger in STORAGE_LOGGERS))
    ]


def check_kafka_warnings(kafka: KafkaBroker) -> None:
    """Kafka's only complaint about kafkalog's files: the producer snapshots, kafkalog's own version 2 (Known
    differences), which Kafka deletes before rebuilding the producer state from the log.

    Kafka parses a snapshot against its version 1 schema before it looks at the version field, so a kafkalog
    snapshot whose entries are too short for that schema (one producer, as in the transactional topic) is
    refused as failing schema validation, and a longer one as an unknown file version 2.
    """
    text = kafka.server_log.read_text(errors="replace")
    warnings = kafka_warnings(kafka)
    snapshots = [w for w in warnings if "Failed to load producer snapshot" in w]
    assert snapshots
    for warning in snapshots:
        assert "unknown file version 2" in warning or "Snapshot failed schema validation" in warning, warning
        path = warning.split("snapshot from '", 1)[1].split("'", 1)[0]
        assert f"Deleted producer state snapshot {path}" in text, path
    assert [w for w in warnings if w not in snapshots] == []


@contextmanager
def kafkalog_on(zookeeper_connect: str, log_dir: Path) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(BROKER_ID, zookeeper_connect=zookeeper_connect, log_dir=log_dir, **KAFKALOG_SETTINGS) as b:
        yield b


@contextmanager
def kafka_on(zookeeper_connect: str, log_dir: Path, data_dir: Path) -> Iterator[KafkaBroker]:
    """Kafka 3.9 on another broker's log dir and chroot; its log's tail printed when the body fails."""
    kafka = KafkaBroker(
        KAFKA_39,
        data_dir,
        zookeeper_connect=zookeeper_connect,
        broker_id=BROKER_ID,
        log_dir=log_dir,
        extra=KAFKA_SETTINGS,
    )
    try:
        kafka.start()
        yield kafka
    except BaseException:
        print(kafka.log_tail(20000))
        raise
    finally:
        kafka.stop()


def test_kafka_39_serves_what_kafkalog_wrote(zookeeper, tmp_path):
    connect = f"{zookeeper.connect_string}/migration-{uuid.uuid4().hex[:8]}"
    log_dir = tmp_path / "logs"
    with kafkalog_on(connect, log_dir) as kafkalog:
        written = write_scenario(kafkalog.bootstrap_servers)
        by_kafkalog = znodes(connect, written, BROKER_ID)
    with kafka_on(connect, log_dir, tmp_path / "kafka") as kafka:
        check_scenario(kafka.bootstrap_servers, written, BROKER_ID)
        check_znodes(by_kafkalog, znodes(connect, written, BROKER_ID))
        check_meta_properties(log_dir, by_kafkalog["cluster"]["id"], BROKER_ID)
        check_kafka_warnings(kafka)


def test_kafkalog_serves_what_kafka_39_wrote_and_kafka_again_after_it(zookeeper, tmp_path, caplog):
    connect = f"{zookeeper.connect_string}/migration-{uuid.uuid4().hex[:8]}"
    log_dir = tmp_path / "logs"
    with kafka_on(connect, log_dir, tmp_path / "kafka") as kafka:
        written = write_scenario(kafka.bootstrap_servers)
        by_kafka = znodes(connect, written, BROKER_ID)
    caplog.set_level(logging.WARNING, logger="kafkalog")
    with kafkalog_on(connect, log_dir) as kafkalog:
        check_scenario(kafkalog.bootstrap_servers, written, BROKER_ID)
        check_znodes(by_kafka, znodes(connect, written, BROKER_ID))
    # Kafka's files read as they are: its producer snapshots, its empty cleaner-offset-checkpoint
    assert [r.getMessage() for r in caplog.records if str(log_dir) in r.getMessage()] == []
    # and back to Kafka: what kafkalog wrote into Kafka's log dir (its own producer snapshots among Kafka's,
    # rewritten checkpoints, an appended batch) is served again
    with kafka_on(connect, log_dir, tmp_path / "kafka-again") as kafka:
        check_scenario(kafka.bootstrap_servers, written, BROKER_ID)
        check_kafka_warnings(kafka)


@pytest.mark.parametrize("first", ["kafkalog", "kafka"])
def test_a_transaction_open_at_the_takeover_is_aborted_by_the_new_coordinator(zookeeper, tmp_path, first):
    """The producer of an open transaction vanishes with the first broker; the second one's transaction
    coordinator (from ``__transaction_state``) times it out and aborts it, which releases the last stable
    offset (from the producer state: the other's snapshots, or the log)."""
    connect = f"{zookeeper.connect_string}/migration-{uuid.uuid4().hex[:8]}"
    log_dir = tmp_path / "logs"
    brokers = {
        "kafkalog": lambda: kafkalog_on(connect, log_dir),
        "kafka": lambda: kafka_on(connect, log_dir, tmp_path / "kafka"),
    }
    topic = f"mig-open-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    with brokers[first]() as broker:
        with AdminClient(broker.bootstrap_servers) as admin:
            admin.create_topics([NewTopic(topic, 1, 1, dict(SMALL_SEGMENTS))])
        producer = Producer(broker.bootstrap_servers, transactional_id=f"tx-{topic}", transaction_timeout_ms=3000)
        producer.init_transactions()
        for outcome in ("committed", "open"):
            producer.begin_transaction()
            for i in range(5):
                producer.send(topic, b"%s-%d" % (outcome.encode(), i), key=b"k", partition=0)
            producer.flush(30)
            if outcome == "committed":
                producer.commit_transaction()
        with KafkaClient(broker.bootstrap_servers) as client:
            assert client.list_offsets({tp: OffsetSpec.LATEST})[tp] == 11  # 5, a COMMIT marker, 5 open
    producer.close(0)  # its broker is gone: nothing more is sent
    with brokers["kafka" if first == "kafkalog" else "kafkalog"]() as broker:
        with KafkaClient(broker.bootstrap_servers) as client:
            wait_until(lambda: client.list_offsets({tp: OffsetSpec.LATEST})[tp] == 12, 60, "the ABORT marker")
        committed = [r.value for r in read(broker.bootstrap_servers, tp, 12, "read_committed")]
        assert committed == [b"committed-%d" % i for i in range(5)]
        everything = [r.value for r in read(broker.bootstrap_servers, tp, 12, "read_uncommitted")]
        assert everything == committed + [b"open-%d" % i for i in range(5)]
