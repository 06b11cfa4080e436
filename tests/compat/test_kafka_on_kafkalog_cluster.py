"""Apache Kafka 4.4's Java clients and tools, and Spark's ``format("kafka")``, against a replicated kafkalog
cluster: three broker processes on the session's ZooKeeper, internal topics and test topics with replication
factor 3 and ``min.insync.replicas=2``.

The module's tests share the cluster; a test that stops or kills a broker starts it again before it returns.
Spark's Real-time Mode (``trigger(realTime=...)``, pyspark 4.3.0) runs with the 4.2.0 connector as source and sink.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import pytest

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition
from tests.waiting import wait_until

from .test_kafka_tools_on_kafkalog import fields, read_all
from .test_spark_kafka_on_kafkalog import spark  # noqa: F401 (the module-scoped SparkSession fixture)
from .tools import compile_java, run_java, run_tool

pytestmark = pytest.mark.compat

JAVA_DIR = Path(__file__).parent / "java"


@pytest.fixture(scope="module")
def kafkalog_cluster(zookeeper, tmp_path_factory):
    """Three kafkalog broker processes (ids 1-3) under a fresh chroot of the session ZooKeeper; the offsets and
    transaction state topics have replication factor 3 (the latter min ISR 2)."""
    cluster = EmbeddedCluster(
        3,
        data_dir=tmp_path_factory.mktemp("kafkalog-cluster"),
        zookeeper_connect=f"{zookeeper.connect_string}/kafkalog-cluster-{uuid.uuid4().hex[:8]}",
        broker_config={
            "offsets.topic.num.partitions": 4,
            "offsets.topic.replication.factor": 3,
            "transaction.state.log.num.partitions": 4,
            "transaction.state.log.replication.factor": 3,
            "transaction.state.log.min.isr": 2,
            "group.initial.rebalance.delay.ms": 0,
        },
    )
    cluster.start()
    yield cluster
    cluster.stop()


def replicated_topic(bootstrap: str, partitions: int = 3, replication: int = 3) -> str:
    """A fresh topic with ``min.insync.replicas=2`` (kafkalog's AdminClient), once every partition has a full ISR."""
    name = f"rep-{uuid.uuid4().hex[:10]}"
    config = {"min.insync.replicas": "2"} if replication > 1 else {}
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, replication, config)])

        def full_isr() -> bool:
            parts = admin.describe_topics([name])[name].partitions
            return len(parts) == partitions and all(len(p.isr) == replication and p.leader >= 0 for p in parts)

        wait_until(full_isr, 60, f"{name}'s replicas in sync")
    return name


def partition_lines(stdout: str) -> dict[int, tuple[str, str, str]]:
    """A Java driver's ``partition <p> leader=<id> replicas=<ids> isr=<ids>`` lines by partition."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("partition "):
            _, p, leader, replicas, isr = line.split(" ")
            out[int(p)] = (leader.split("=")[1], replicas.split("=")[1], isr.split("=")[1])
    return out


def test_kafka_topics_describe_shows_three_replicas_in_sync(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = f"tools-rep-{uuid.uuid4().hex[:8]}"
    created = run_tool(
        "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
        "--partitions", "3", "--replication-factor", "3", "--config", "min.insync.replicas=2",
    )  # fmt: skip
    assert created.stdout.strip() == f"Created topic {topic}."
    with AdminClient(bootstrap) as admin:
        wait_until(
            lambda: all(len(p.isr) == 3 for p in admin.describe_topics([topic])[topic].partitions), 60, "full ISRs"
        )
    described = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic).stdout
    rows = [fields(line) for line in described.splitlines() if line.strip()]
    header, partitions = rows[0], rows[1:]
    assert header["PartitionCount"] == "3" and header["ReplicationFactor"] == "3"
    assert "min.insync.replicas=2" in header["Configs"]
    assert [p["Partition"] for p in partitions] == ["0", "1", "2"]
    for p in partitions:
        replicas = p["Replicas"].split(",")
        assert sorted(replicas) == ["1", "2", "3"]
        assert sorted(p["Isr"].split(",")) == ["1", "2", "3"]
        assert p["Leader"] in replicas
    # Kafka's default placement spreads the preferred leaders: one partition led by each broker
    assert sorted(p["Leader"] for p in partitions) == ["1", "2", "3"]


def test_console_producer_and_consumer_on_replicated_topic(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 2)
    lines = [f"key-{i}:value {i}" for i in range(40)]
    run_tool(
        "kafka-console-producer", "--bootstrap-server", bootstrap, "--topic", topic,
        "--property", "parse.key=true", "--property", "key.separator=:",
        "--producer-property", "acks=all", "--producer-property", "enable.idempotence=true",
        input="\n".join(lines) + "\n",
    )  # fmt: skip
    ours = read_all(bootstrap, topic, 2)
    assert sorted((r.key, r.value) for r in ours) == sorted(
        (f"key-{i}".encode(), f"value {i}".encode()) for i in range(40)
    )
    out = run_tool(
        "kafka-console-consumer", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
        "--max-messages", "40", "--timeout-ms", "30000",
        "--property", "print.key=true", "--property", "print.partition=true", "--property", "print.offset=true",
    ).stdout  # fmt: skip
    printed = sorted(tuple(line.split("\t")) for line in out.splitlines() if line.startswith("Partition:"))
    assert printed == sorted(
        (f"Partition:{r.partition}", f"Offset:{r.offset}", r.key.decode(), r.value.decode()) for r in ours
    )


def test_java_transactional_producer_and_read_committed_group_on_replicated_topic(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 3)
    classes = compile_java((JAVA_DIR / "ExactlyOnceDriver.java").read_text())
    n = 60
    txn = f"java-tx-{uuid.uuid4().hex[:8]}"
    produced = run_java(classes, "ExactlyOnceDriver", "produce", bootstrap, topic, txn, str(n)).stdout
    committed = sorted(
        tuple(map(int, line.split()[1:])) for line in produced.splitlines() if line.startswith("committed")
    )
    assert len(committed) == n
    ours = read_all(bootstrap, topic, 3, isolation_level="read_committed")
    assert sorted((r.partition, r.offset) for r in ours) == committed
    assert len(read_all(bootstrap, topic, 3)) == 2 * n

    group = f"java-g-{uuid.uuid4().hex[:8]}"
    strategy = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
    consumed = run_java(classes, "ExactlyOnceDriver", "consume", bootstrap, topic, group, str(n), strategy).stdout
    rows = [line.split(" ", 4)[1:] for line in consumed.splitlines() if line.startswith("record")]
    assert sorted((int(p), int(o)) for p, o, _, _ in rows) == committed
    assert sorted(v for _, _, _, v in rows) == sorted(f"committed-{i}" for i in range(n))
    with AdminClient(bootstrap) as admin, KafkaClient(bootstrap) as client:
        offsets = admin.list_group_offsets(group)
        tps = [TopicPartition(topic, p) for p in range(3)]
        stable = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps}, isolation_level=1)
    assert {tp: o.offset for tp, o in offsets.items()} == {tp: stable[tp] for tp in tps}


def test_java_admin_reassigns_a_replica_to_another_broker_and_adds_partitions(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 1, replication=1)
    with AdminClient(bootstrap) as admin:
        source = admin.describe_topics([topic])[topic].partitions[0].replicas[0]
    target = next(b for b in kafkalog_cluster.broker_ids if b != source)
    with Producer(bootstrap, acks="all") as producer:
        for i in range(50):
            producer.send(topic, b"v%d" % i, key=b"k%d" % i)
        producer.flush(30)

    classes = compile_java((JAVA_DIR / "ReassignDriver.java").read_text())
    moved = run_java(classes, "ReassignDriver", "reassign", bootstrap, topic, "0", str(target)).stdout
    assert "done" in moved.splitlines()
    assert partition_lines(moved) == {0: (str(target), str(target), str(target))}
    assert [(r.offset, r.key, r.value) for r in read_all(bootstrap, topic, 1)] == [
        (i, b"k%d" % i, b"v%d" % i) for i in range(50)
    ]
    # the replica left the source broker's log dir
    source_dir = kafkalog_cluster.broker_dir(source) / "logs" / f"{topic}-0"
    wait_until(lambda: not source_dir.exists(), 30, f"{source_dir} deleted")

    grown = run_java(classes, "ReassignDriver", "grow", bootstrap, topic, "3").stdout
    assert "grown 3" in grown.splitlines()
    parts = partition_lines(grown)
    assert sorted(parts) == [0, 1, 2]
    assert all(leader == replicas == isr for leader, replicas, isr in parts.values())
    with Producer(bootstrap, acks="all") as producer:
        metas = [producer.send(topic, b"new-%d" % p, partition=p) for p in (1, 2)]
        producer.flush(30)
        assert [(m.result(30).partition, m.result(30).offset) for m in metas] == [(1, 0), (2, 0)]


def test_java_admin_reorders_replicas_of_a_replicated_partition(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 1)
    with AdminClient(bootstrap) as admin:
        before = admin.describe_topics([topic])[topic].partitions[0].replicas
    with Producer(bootstrap, acks="all") as producer:
        for i in range(20):
            producer.send(topic, b"v%d" % i)
        producer.flush(30)
    reordered = list(reversed(before))
    classes = compile_java((JAVA_DIR / "ReassignDriver.java").read_text())
    out = run_java(classes, "ReassignDriver", "reassign", bootstrap, topic, "0", ",".join(map(str, reordered))).stdout
    assert "done" in out.splitlines()  # an order-only change is applied at once, never listed as ongoing
    # brokers learn the new order from ZooKeeper asynchronously (as Kafka's learn it from UpdateMetadata)
    with AdminClient(bootstrap) as admin:
        wait_until(
            lambda: list(admin.describe_topics([topic])[topic].partitions[0].replicas) == reordered,
            30,
            "the new replica order in every broker's metadata",
        )
    described = run_java(classes, "ReassignDriver", "describe", bootstrap, topic).stdout
    _, replicas, isr = partition_lines(described)[0]
    assert replicas == ",".join(map(str, reordered))
    assert sorted(isr.split(",")) == ["1", "2", "3"]
    assert [r.value for r in read_all(bootstrap, topic, 1)] == [b"v%d" % i for i in range(20)]


def test_spark_kafka_batch_write_and_read_on_replicated_cluster(spark, kafkalog_cluster):  # noqa: F811
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 3)
    rows = [(f"k{i}", f"v{i}", i % 3) for i in range(60)]
    (
        spark.createDataFrame(rows, "key string, value string, partition int")
        .write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.acks", "all")
        .option("topic", topic)
        .save()
    )
    ours = read_all(bootstrap, topic, 3)
    assert sorted((r.partition, r.key, r.value) for r in ours) == sorted(
        (p, k.encode(), v.encode()) for k, v, p in rows
    )
    df = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .selectExpr("partition", "offset", "CAST(key AS STRING) k", "CAST(value AS STRING) v")
    )
    got = sorted(tuple(r) for r in df.collect())
    assert got == sorted((r.partition, r.offset, r.key.decode(), r.value.decode()) for r in ours)


def test_java_consumer_reads_everything_after_a_broker_stops(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 3)
    n = 60
    with Producer(bootstrap, acks="all") as producer:
        for i in range(n):
            producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % 3)
        producer.flush(30)
    with AdminClient(bootstrap) as admin:
        victim = admin.describe_topics([topic])[topic].partitions[0].leader
    alive = [b for b in kafkalog_cluster.broker_ids if b != victim]
    survivors = ",".join(f"{kafkalog_cluster.host}:{kafkalog_cluster.ports[b]}" for b in alive)
    kafkalog_cluster.stop_broker(victim)
    try:
        with AdminClient(survivors) as admin:

            def new_leaders() -> bool:
                parts = admin.describe_topics([topic])[topic].partitions
                return all(p.leader in alive for p in parts)

            wait_until(new_leaders, 60, "leaders on the surviving brokers")
        classes = compile_java((JAVA_DIR / "ExactlyOnceDriver.java").read_text())
        group = f"java-failover-{uuid.uuid4().hex[:8]}"
        strategy = "org.apache.kafka.clients.consumer.RangeAssignor"
        consumed = run_java(classes, "ExactlyOnceDriver", "consume", bootstrap, topic, group, str(n), strategy).stdout
        rows = [line.split(" ", 4)[1:] for line in consumed.splitlines() if line.startswith("record")]
        assert sorted((int(p), int(o), k, v) for p, o, k, v in rows) == sorted(
            (i % 3, i // 3, f"k{i}", f"v{i}") for i in range(n)
        )
    finally:
        kafkalog_cluster.start_broker(victim)


def test_spark_real_time_mode_query_streams_topic_to_topic_on_replicated_cluster(spark, kafkalog_cluster, tmp_path):  # noqa: F811
    bootstrap = kafkalog_cluster.bootstrap_servers
    source, sink = replicated_topic(bootstrap, 2), replicated_topic(bootstrap, 2)
    with Producer(bootstrap, acks="all") as producer:
        for i in range(20):
            producer.send(source, b"before-%d" % i, key=b"k%d" % i, partition=i % 2)
        producer.flush(30)
    query = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "concat(CAST(value AS STRING), '-rt') AS value")
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .outputMode("update")
        .trigger(realTime="5 seconds")
        .start()
    )
    try:
        # the query runs with Spark's real-time trigger, not a micro-batch one
        assert str(query._jsq.streamingQuery().trigger()) == "RealTimeTrigger(5000)"
        with Producer(bootstrap, acks="all") as producer:
            for i in range(20):
                producer.send(source, b"during-%d" % i, key=b"d%d" % i, partition=i % 2)
            producer.flush(30)
        expected = sorted([b"before-%d-rt" % i for i in range(20)] + [b"during-%d-rt" % i for i in range(20)])
        got: list = []

        def arrived() -> bool:
            assert query.exception() is None, query.exception()
            got[:] = sorted(r.value for r in read_all(bootstrap, sink, 2))
            return len(got) >= len(expected)

        wait_until(arrived, 120, "the real-time query's output")
        assert got == expected
    finally:
        query.stop()


def test_java_transactions_after_a_broker_crash_and_the_broker_rejoins_the_isr(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 3)
    with Producer(bootstrap, acks="all") as producer:
        for i in range(30):
            producer.send(topic, b"early-%d" % i, partition=i % 3)
        producer.flush(30)
    with AdminClient(bootstrap) as admin:
        victim = admin.describe_topics([topic])[topic].partitions[1].leader
    alive = [b for b in kafkalog_cluster.broker_ids if b != victim]
    survivors = ",".join(f"{kafkalog_cluster.host}:{kafkalog_cluster.ports[b]}" for b in alive)
    kafkalog_cluster.kill_broker(victim)  # SIGKILL: no controlled shutdown; ZooKeeper notices at session expiry
    try:
        with AdminClient(survivors) as admin:

            def failed_over() -> bool:
                parts = admin.describe_topics([topic])[topic].partitions
                return all(p.leader in alive and victim not in p.isr for p in parts)

            wait_until(failed_over, 90, "leaders on the survivors and the crashed broker out of the ISRs")
        # two in-sync replicas left: acks=all writes with min.insync.replicas=2 still succeed
        classes = compile_java((JAVA_DIR / "ExactlyOnceDriver.java").read_text())
        txn = f"java-crash-tx-{uuid.uuid4().hex[:8]}"
        produced = run_java(classes, "ExactlyOnceDriver", "produce", survivors, topic, txn, "30").stdout
        committed = [line for line in produced.splitlines() if line.startswith("committed")]
        assert len(committed) == 30
        group = f"java-crash-{uuid.uuid4().hex[:8]}"
        strategy = "org.apache.kafka.clients.consumer.RangeAssignor"
        consumed = run_java(classes, "ExactlyOnceDriver", "consume", survivors, topic, group, "60", strategy).stdout
        values = sorted(line.split(" ", 4)[4] for line in consumed.splitlines() if line.startswith("record"))
        assert values == sorted([f"early-{i}" for i in range(30)] + [f"committed-{i}" for i in range(30)])
    finally:
        kafkalog_cluster.start_broker(victim)
    with AdminClient(bootstrap) as admin:
        wait_until(
            lambda: all(len(p.isr) == 3 for p in admin.describe_topics([topic])[topic].partitions),
            90,
            f"broker {victim} back in every ISR",
        )
    assert sorted(r.value for r in read_all(bootstrap, topic, 3, isolation_level="read_committed")) == sorted(
        [b"early-%d" % i for i in range(30)] + [b"committed-%d" % i for i in range(30)]
    )


def test_spark_kafka_micro_batch_resumes_from_its_checkpoint_after_a_leader_moves(spark, kafkalog_cluster, tmp_path):  # noqa: F811
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 2)

    def produce(servers: str, start: int, stop: int) -> None:
        with Producer(servers, acks="all") as producer:
            for i in range(start, stop):
                producer.send(topic, b"s%d" % i, partition=i % 2)
            producer.flush(30)

    def run_once(servers: str) -> None:
        query = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", servers)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .load()
            .selectExpr("partition", "offset", "CAST(value AS STRING) v")
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        assert query.exception() is None

    def written() -> list[tuple[int, int, str]]:
        return sorted((r.partition, r.offset, r.v) for r in spark.read.parquet(str(tmp_path / "out")).collect())

    def expected(n: int) -> list[tuple[int, int, str]]:
        return sorted((i % 2, i // 2, f"s{i}") for i in range(n))

    produce(bootstrap, 0, 20)
    run_once(bootstrap)
    assert written() == expected(20)
    with AdminClient(bootstrap) as admin:
        victim = admin.describe_topics([topic])[topic].partitions[0].leader
    alive = [b for b in kafkalog_cluster.broker_ids if b != victim]
    survivors = ",".join(f"{kafkalog_cluster.host}:{kafkalog_cluster.ports[b]}" for b in alive)
    kafkalog_cluster.stop_broker(victim)
    try:
        with AdminClient(survivors) as admin:
            wait_until(
                lambda: all(p.leader in alive for p in admin.describe_topics([topic])[topic].partitions),
                60,
                "leaders on the surviving brokers",
            )
        produce(survivors, 20, 50)
        run_once(bootstrap)  # the same checkpoint, a bootstrap list still naming the stopped broker
        assert written() == expected(50)
    finally:
        kafkalog_cluster.start_broker(victim)


def test_java_idempotent_producer_writes_through_a_leader_stop_without_loss_or_duplicates(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 2)
    n = 3000
    tps = [TopicPartition(topic, p) for p in range(2)]
    result: dict = {}

    def perf_test() -> None:
        result["proc"] = run_tool(
            "kafka-producer-perf-test", "--topic", topic, "--num-records", str(n), "--record-size", "100",
            "--throughput", "300", "--command-property", f"bootstrap.servers={bootstrap}", "acks=all",
            "enable.idempotence=true", "linger.ms=5", check=False,
        )  # fmt: skip

    with AdminClient(bootstrap) as admin:
        victim = admin.describe_topics([topic])[topic].partitions[0].leader
    thread = threading.Thread(target=perf_test, daemon=True)
    thread.start()
    with KafkaClient(bootstrap) as client:
        wait_until(lambda: sum(client.list_offsets({tp: OffsetSpec.LATEST for tp in tps}).values()) > 600, 60, "writes")
    kafkalog_cluster.stop_broker(victim)
    try:
        thread.join(180)
        proc = result["proc"]
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().splitlines()[-1].startswith(f"{n} records sent, ")
        alive = [b for b in kafkalog_cluster.broker_ids if b != victim]
        survivors = ",".join(f"{kafkalog_cluster.host}:{kafkalog_cluster.ports[b]}" for b in alive)
        with KafkaClient(survivors) as client:
            ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        assert sum(ends.values()) == n  # acks=all + idempotence: every record once across the leader change
    finally:
        kafkalog_cluster.start_broker(victim)


def test_kafka_reassign_partitions_moves_a_replica_and_verifies_completion(kafkalog_cluster, tmp_path):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 1, replication=2)
    with AdminClient(bootstrap) as admin:
        before = list(admin.describe_topics([topic])[topic].partitions[0].replicas)
    with Producer(bootstrap, acks="all") as producer:
        for i in range(30):
            producer.send(topic, b"v%d" % i)
        producer.flush(30)
    spare = next(b for b in kafkalog_cluster.broker_ids if b not in before)
    target = [before[1], spare]
    plan = tmp_path / "reassign.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": target}]}))
    tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
    executed = run_tool(tool, "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--execute")
    assert f"Successfully started partition reassignment for {topic}-0" in executed.stdout
    # the rollback plan it prints first is the current assignment, each replica's log dir from DescribeLogDirs
    rollback = json.loads(next(line for line in executed.stdout.splitlines() if line.startswith("{")))
    log_dirs = [str((kafkalog_cluster.broker_dir(b) / "logs").absolute()) for b in before]
    assert rollback["partitions"] == [{"topic": topic, "partition": 0, "replicas": before, "log_dirs": log_dirs}]

    def verified() -> bool:
        out = run_tool(tool, "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan), "--verify")
        return f"Reassignment of partition {topic}-0 is completed." in out.stdout

    wait_until(verified, 90, "kafka-reassign-partitions --verify reporting completion")
    with AdminClient(bootstrap) as admin:
        wait_until(
            lambda: list(admin.describe_topics([topic])[topic].partitions[0].replicas) == target, 30, "new replicas"
        )
    described = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic).stdout
    row = [fields(line) for line in described.splitlines() if "Partition:" in line][0]
    assert row["Replicas"] == ",".join(map(str, target))
    assert sorted(row["Isr"].split(",")) == sorted(map(str, target))
    assert [r.value for r in read_all(bootstrap, topic, 1)] == [b"v%d" % i for i in range(30)]


def test_kafka_topics_lists_under_replicated_partitions_while_a_broker_is_down(kafkalog_cluster):
    bootstrap = kafkalog_cluster.bootstrap_servers
    topic = replicated_topic(bootstrap, 3)
    victim = kafkalog_cluster.broker_ids[-1]
    alive = [b for b in kafkalog_cluster.broker_ids if b != victim]
    survivors = ",".join(f"{kafkalog_cluster.host}:{kafkalog_cluster.ports[b]}" for b in alive)

    def under_replicated(servers: str) -> list[dict[str, str]]:
        out = run_tool(
            "kafka-topics", "--bootstrap-server", servers, "--describe", "--topic", topic,
            "--under-replicated-partitions",
        ).stdout  # fmt: skip
        return [fields(line) for line in out.splitlines() if "Partition:" in line]

    assert under_replicated(bootstrap) == []
    kafkalog_cluster.stop_broker(victim)
    try:
        with AdminClient(survivors) as admin:
            wait_until(
                lambda: all(victim not in p.isr for p in admin.describe_topics([topic])[topic].partitions),
                60,
                f"broker {victim} out of every ISR",
            )
        rows = under_replicated(survivors)
        assert [r["Partition"] for r in rows] == ["0", "1", "2"]
        for r in rows:
            assert sorted(r["Replicas"].split(",")) == ["1", "2", "3"]
            assert sorted(r["Isr"].split(",")) == sorted(map(str, alive))
            assert r["Leader"] in map(str, alive)
    finally:
        kafkalog_cluster.start_broker(victim)
    with AdminClient(bootstrap) as admin:
        wait_until(
            lambda: all(len(p.isr) == 3 for p in admin.describe_topics([topic])[topic].partitions),
            90,
            f"broker {victim} back in every ISR",
        )
    assert under_replicated(bootstrap) == []
