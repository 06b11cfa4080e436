"""Apache Kafka 4.4's admin tools against kafkalog: kafka-configs, kafka-get-offsets, kafka-consumer-groups
--reset-offsets, kafka-transactions, kafka-log-dirs, and kafka-dump-log on kafkalog's own segment, index and
snapshot files."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from spark_kafkalog.client import AdminClient, Producer, TopicPartition

from .conftest import new_topic
from .tools import run_tool

pytestmark = pytest.mark.compat

T0 = 1_700_000_000_000  # record timestamps (ms): T0 + i * 1000


def produce_keyed(bootstrap: str, topic: str, n: int, partitions: int) -> list[tuple[int, int]]:
    """Record i (key ``k<i>``, value ``v<i>``, timestamp T0 + i s) to partition i % partitions; (partition, offset)."""
    with Producer(bootstrap) as producer:
        sent = [
            producer.send(topic, b"v%d" % i, key=b"k%d" % i, partition=i % partitions, timestamp_ms=T0 + i * 1000)
            for i in range(n)
        ]
        producer.flush(30)
        return [(m.partition, m.offset) for m in (f.result(30) for f in sent)]


def config_lines(stdout: str) -> dict[str, str]:
    """``name=value`` of each config line of ``kafka-configs --describe`` (two-space indented)."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("  "):
            name, _, rest = line.strip().partition("=")
            out[name] = rest.split(" sensitive=")[0]
    return out


def test_kafka_configs_alters_and_describes_a_topic_config_and_describes_the_broker(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 1)
    configs = ("kafka-configs", "--bootstrap-server", bootstrap, "--entity-type", "topics", "--entity-name", topic)
    empty = run_tool(*configs, "--describe").stdout
    assert empty.strip() == f"Dynamic configs for topic {topic} are:"
    altered = run_tool(*configs, "--alter", "--add-config", "retention.ms=7777,cleanup.policy=compact").stdout
    assert altered.strip() == f"Completed updating config for topic {topic}."
    described = run_tool(*configs, "--describe").stdout
    assert config_lines(described) == {"cleanup.policy": "compact", "retention.ms": "7777"}
    assert "synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=7777, DEFAULT_CONFIG:log.retention.ms=" in described
    with AdminClient(bootstrap) as admin:
        ours = admin.describe_configs(topic, keys=["retention.ms", "cleanup.policy"])
    assert ours == {"retention.ms": "7777", "cleanup.policy": "compact"}

    run_tool(*configs, "--alter", "--delete-config", "cleanup.policy")
    assert config_lines(run_tool(*configs, "--describe").stdout) == {"retention.ms": "7777"}
    everything = config_lines(run_tool(*configs, "--describe", "--all").stdout)
    assert everything["cleanup.policy"] == "delete" and everything["retention.ms"] == "7777"
    assert {"segment.bytes", "min.insync.replicas", "max.message.bytes", "compression.type"} <= everything.keys()

    broker = ("kafka-configs", "--bootstrap-server", bootstrap, "--entity-type", "brokers", "--entity-name", "0")
    assert run_tool(*broker, "--describe").stdout.strip() == "Dynamic configs for broker 0 are:"
    broker_all = run_tool(*broker, "--describe", "--all").stdout
    assert broker_all.splitlines()[0] == "All configs for broker 0 are:"
    assert config_lines(broker_all)["broker.id"] == "0"
    assert "broker.id=0 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=0}" in broker_all
    assert config_lines(broker_all)["group.initial.rebalance.delay.ms"] == "0"


def test_kafka_get_offsets_earliest_latest_by_time_and_max_timestamp(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    placed = produce_keyed(bootstrap, topic, 10, 2)
    assert placed == [(i % 2, i // 2) for i in range(10)]

    def offsets(*args: str) -> list[str]:
        out = run_tool("kafka-get-offsets", "--bootstrap-server", bootstrap, *args).stdout
        return sorted(out.split())

    assert offsets("--topic", topic, "--time", "-2") == [f"{topic}:0:0", f"{topic}:1:0"]
    assert offsets("--topic", topic, "--time", "-1") == [f"{topic}:0:5", f"{topic}:1:5"]
    assert offsets("--topic", topic, "--time", "earliest") == [f"{topic}:0:0", f"{topic}:1:0"]
    # the first record at or after T0+3s: record 4 (p0 offset 2) and record 3 (p1 offset 1)
    assert offsets("--topic", topic, "--time", str(T0 + 3000)) == [f"{topic}:0:2", f"{topic}:1:1"]
    # past every timestamp: no offset, so the tool prints nothing for the partition
    assert offsets("--topic", topic, "--time", str(T0 + 60_000)) == []
    # -3: the record with the largest timestamp (records 8 and 9, each partition's offset 4)
    assert offsets("--topic", topic, "--time", "-3") == [f"{topic}:0:4", f"{topic}:1:4"]
    assert offsets("--topic-partitions", f"{topic}:1", "--time", "latest") == [f"{topic}:1:5"]


def group_table(stdout: str, group: str, column: int) -> dict[int, str]:
    """partition -> the given column of the tool's rows for ``group``."""
    return {int(r[2]): r[column] for r in (line.split() for line in stdout.splitlines()) if r and r[0] == group}


def test_consumer_groups_reset_offsets_then_describe_shows_them(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    produce_keyed(bootstrap, topic, 10, 2)
    group = f"reset-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 4, TopicPartition(topic, 1): 3})
    groups = ("kafka-consumer-groups", "--bootstrap-server", bootstrap, "--group", group)

    def reset(*args: str) -> dict[int, str]:
        return group_table(run_tool(*groups, "--reset-offsets", *args, "--execute").stdout, group, 3)

    def described() -> dict[int, tuple[str, str, str]]:
        out = run_tool(*groups, "--describe").stdout
        rows = (line.split() for line in out.splitlines())
        return {int(r[2]): (r[3], r[4], r[5]) for r in rows if r and r[0] == group}

    assert reset("--to-earliest", "--topic", topic) == {0: "0", 1: "0"}
    assert described() == {0: ("0", "5", "5"), 1: ("0", "5", "5")}
    assert reset("--to-offset", "3", "--topic", f"{topic}:0") == {0: "3"}
    assert described() == {0: ("3", "5", "2"), 1: ("0", "5", "5")}
    # shift-by is clamped to the log end (5) on partition 0
    assert reset("--shift-by", "2", "--topic", topic) == {0: "5", 1: "2"}
    assert described() == {0: ("5", "5", "0"), 1: ("2", "5", "3")}
    assert reset("--to-latest", "--topic", f"{topic}:1") == {1: "5"}
    # dry run (no --execute) plans without committing
    planned = run_tool(*groups, "--reset-offsets", "--to-earliest", "--topic", topic, "--dry-run").stdout
    assert group_table(planned, group, 3) == {0: "0", 1: "0"}
    with AdminClient(bootstrap) as admin:
        committed = admin.list_group_offsets(group)
    assert {tp.partition: o.offset for tp, o in committed.items()} == {0: 5, 1: 5}


def tab_rows(stdout: str) -> list[dict[str, str]]:
    """The tab-separated table of ``kafka-transactions`` as one dict per row (header names as keys)."""
    lines = [[cell.strip() for cell in line.split("\t")] for line in stdout.splitlines() if line.strip()]
    return [{k: v for k, v in zip(lines[0], row, strict=False) if k} for row in lines[1:]]  # trailing tab


def test_kafka_transactions_lists_and_describes_a_kafkalog_transactional_producer(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    txn = f"tx-tools-{uuid.uuid4().hex[:8]}"
    tool = ("kafka-transactions", "--bootstrap-server", bootstrap)
    with Producer(bootstrap, transactional_id=txn, transaction_timeout_ms=45000) as producer:
        producer.init_transactions()
        _, producer_id, epoch = producer.transaction_identity
        producer.begin_transaction()
        producer.send(topic, b"a", partition=0)
        producer.flush(30)
        producer.commit_transaction(30)
        producer.begin_transaction()
        producer.send(topic, b"b", partition=1)
        producer.flush(30)

        listed = [r for r in tab_rows(run_tool(*tool, "list").stdout) if r["TransactionalId"] == txn]
        assert listed == [
            {"TransactionalId": txn, "Coordinator": "0", "ProducerId": str(producer_id), "TransactionState": "Ongoing"}
        ]
        (ongoing,) = tab_rows(run_tool(*tool, "describe", "--transactional-id", txn).stdout)
        assert ongoing["CoordinatorId"] == "0" and ongoing["ProducerId"] == str(producer_id)
        # transactions v2 (transaction.version 2, the default): the first commit bumped the epoch
        assert ongoing["ProducerEpoch"] == str(epoch + 1) == str(producer.transaction_identity[2])
        assert ongoing["TransactionState"] == "Ongoing"
        assert ongoing["TransactionTimeoutMs"] == "45000" and ongoing["TopicPartitions"] == f"{topic}-1"
        assert int(ongoing["TransactionDurationMs"]) >= 0
        producer.commit_transaction(30)

    (done,) = tab_rows(run_tool(*tool, "describe", "--transactional-id", txn).stdout)
    assert done["TransactionState"] == "CompleteCommit" and done["TopicPartitions"] == ""
    listed = {r["TransactionalId"]: r["TransactionState"] for r in tab_rows(run_tool(*tool, "list").stdout)}
    assert listed[txn] == "CompleteCommit"
    missing = run_tool(*tool, "describe", "--transactional-id", f"no-such-{txn}", check=False)
    assert missing.returncode == 1 and "failed because the ID could not be found" in missing.stderr


def test_kafka_transactions_describe_producers_and_find_hanging_on_kafkalog(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 1)
    tool = ("kafka-transactions", "--bootstrap-server", bootstrap)
    describe = (*tool, "describe-producers", "--topic", topic, "--partition", "0")
    with Producer(bootstrap, linger_ms=0) as idempotent:
        for i in range(3):  # three batches: sequences 0, 1, 2 at offsets 0, 1, 2
            idempotent.send(topic, b"x%d" % i, partition=0)
            idempotent.flush(30)
    with Producer(bootstrap, transactional_id=f"tx-dp-{uuid.uuid4().hex[:8]}") as producer:
        producer.init_transactions()
        _, txn_id, epoch = producer.transaction_identity
        producer.begin_transaction()
        producer.send(topic, b"in-txn", partition=0)  # offset 3
        producer.flush(30)
        rows = {r["ProducerId"]: r for r in tab_rows(run_tool(*describe).stdout)}
        assert len(rows) == 2
        open_txn = rows.pop(str(txn_id))
        assert open_txn == {
            "ProducerId": str(txn_id),
            "ProducerEpoch": str(epoch),
            "LatestCoordinatorEpoch": "-1",
            "LastSequence": "0",
            "LastTimestamp": open_txn["LastTimestamp"],
            "CurrentTransactionStartOffset": "3",
        }
        ((_, plain),) = rows.items()  # the idempotent producer
        assert (plain["ProducerEpoch"], plain["LastSequence"], plain["CurrentTransactionStartOffset"]) == (
            "0",
            "2",
            "None",
        )
        # a second-old transaction is not hanging: find-hanging prints its header only
        hanging = run_tool(*tool, "find-hanging", "--broker-id", "0").stdout
        assert tab_rows(hanging) == []
        assert hanging.split()[:3] == ["Topic", "Partition", "ProducerId"]
        producer.commit_transaction(30)
    committed = {r["ProducerId"]: r for r in tab_rows(run_tool(*describe).stdout)}[str(txn_id)]
    assert committed["CurrentTransactionStartOffset"] == "None"
    assert int(committed["LatestCoordinatorEpoch"]) >= 0


def test_kafka_log_dirs_describes_kafkalog_partitions_with_their_sizes(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 2)
    produce_keyed(bootstrap, topic, 20, 2)
    out = run_tool(
        "kafka-log-dirs", "--bootstrap-server", bootstrap, "--describe", "--topic-list", topic, "--broker-list", "0"
    ).stdout
    report = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    logs = kafkalog.broker.log_manager
    (log_dir,) = logs.log_dirs
    on_disk = {p: sum(f.stat().st_size for f in (log_dir / f"{topic}-{p}").glob("*.log")) for p in (0, 1)}
    assert all(size > 0 for size in on_disk.values())
    assert report["version"] == 1
    (broker,) = report["brokers"]
    assert broker["broker"] == 0
    (described,) = broker["logDirs"]
    assert (described["logDir"], described["error"]) == (str(log_dir), None)
    assert sorted(described["partitions"], key=lambda p: p["partition"]) == [
        {"partition": f"{topic}-{p}", "size": on_disk[p], "offsetLag": 0, "isFuture": False} for p in (0, 1)
    ]
    assert on_disk == {p: logs.get_log(topic, p).size_in_bytes for p in (0, 1)}


FIELD = re.compile(r"(\w+): (\S+)")


def dump(files: list[Path]) -> tuple[dict[str, list], str]:
    """kafka-dump-log --print-data-log --deep-iteration of ``files``: per file name its parsed lines
    (batches as dicts with their records under "records", index entries as tuples), and stderr."""
    proc = run_tool(
        "kafka-dump-log", "--files", ",".join(map(str, files)), "--print-data-log", "--deep-iteration"
    )  # fmt: skip
    out: dict[str, list] = {}
    current: list = []
    for line in proc.stdout.splitlines():
        if line.startswith("Dumping "):
            current = out.setdefault(Path(line.split(" ", 1)[1]).name, [])
        elif line.startswith("baseOffset:"):
            current.append({**dict(FIELD.findall(line)), "records": []})
        elif line.startswith("| offset:"):
            current[-1]["records"].append(dict(FIELD.findall(line)))
        elif line.startswith("offset:") or line.startswith("timestamp:"):
            current.append(tuple(int(v) for _, v in FIELD.findall(line)))
    return out, proc.stderr


def test_dump_log_reads_kafkalog_segments_and_indexes(zookeeper, tmp_path):
    from broker.server import EmbeddedBroker

    log_dir = tmp_path / "log"
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/dump-{uuid.uuid4().hex[:8]}",
        log_dir=log_dir,
        offsets_topic_num_partitions=1,
        offsets_topic_replication_factor=1,
        transaction_state_log_replication_factor=1,
        transaction_state_log_num_partitions=1,
    )
    broker.start()
    try:
        bootstrap = broker.bootstrap_servers
        # an index entry after every batch but each segment's first; a new segment every ~600 bytes
        topic = new_topic(bootstrap, 1, index_interval_bytes="1", segment_bytes="600")
        expected = []
        with Producer(bootstrap, linger_ms=0, compression_type="gzip") as producer:
            for b in range(6):  # 6 batches of 3 records
                for i in range(b * 3, b * 3 + 3):
                    headers = [("h", b"%d" % i)]
                    producer.send(
                        topic, b"value-%d" % i, key=b"key-%d" % i, headers=headers, timestamp_ms=T0 + i * 1000
                    )
                    expected.append((i, T0 + i * 1000, f"key-{i}", f"value-{i}", "[h]"))
                producer.flush(30)
        with Producer(bootstrap, transactional_id=f"dump-{uuid.uuid4().hex[:6]}") as producer:
            producer.init_transactions()
            producer.begin_transaction()
            producer.send(topic, b"in-txn", key=b"txn-key", timestamp_ms=T0 + 18_000)
            producer.commit_transaction(30)
        expected.append((18, T0 + 18_000, "txn-key", "in-txn", "[]"))
    finally:
        broker.stop()  # a clean shutdown: indexes flushed, as a log dir handed to Kafka would be

    partition_dir = log_dir / f"{topic}-0"
    segments = sorted(partition_dir.glob("*.log"))
    assert len(segments) >= 2
    files = [f for s in segments for f in (s, s.with_suffix(".index"), s.with_suffix(".timeindex"))]
    dumped, stderr = dump(files)

    records, control = [], []
    for segment in segments:
        batches = dumped[segment.name]
        base = int(segment.stem)
        assert batches and int(batches[0]["baseOffset"]) == base
        position = 0
        for batch in batches:
            assert batch["isvalid"] == "true" and batch["magic"] == "2"
            assert int(batch["position"]) == position
            position += int(batch["size"])
            if batch["isControl"] == "true":
                control.append((batch["baseOffset"], batch["isTransactional"]))
                continue
            assert batch["compresscodec"] == ("none" if batch["isTransactional"] == "true" else "gzip")
            assert int(batch["count"]) == len(batch["records"])
            for r in batch["records"]:
                records.append((int(r["offset"]), int(r["CreateTime"]), r["key"], r["payload"], r["headerKeys"]))
        assert position == segment.stat().st_size
        # Kafka's rule: an entry (last offset of a batch, its position) once more than index.interval.bytes
        # were appended since the previous one, i.e. for every batch but the segment's first
        assert dumped[segment.with_suffix(".index").name] == [
            (int(b["lastOffset"]), int(b["position"])) for b in batches[1:]
        ]
        time_entries = dumped[segment.with_suffix(".timeindex").name]
        # Kafka's rule: (largest timestamp so far, its batch's last offset) with each offset index entry, and
        # once more when the segment stops being active (a roll, or the broker's close) unless already there
        expected_times = [(int(b["CreateTime"]), int(b["lastOffset"])) for b in batches[1:]]
        newest = max(batches, key=lambda b: int(b["CreateTime"]))
        if expected_times[-1:] != [(int(newest["CreateTime"]), int(newest["lastOffset"]))]:
            expected_times.append((int(newest["CreateTime"]), int(newest["lastOffset"])))
        assert time_entries == expected_times
    assert records == expected
    assert control == [("19", "true")]
    # Kafka 4.4's tool quirk: it starts every .log file's offset check at -1, so each segment with a
    # non-zero base offset is reported "non-consecutive" (Kafka's own segments too): nothing else
    reported = re.findall(r"Non-consecutive offsets in (\S+)\n\s+-1 is followed by (\d+)", stderr)
    assert sorted(reported) == sorted((str(s), str(int(s.stem))) for s in segments if int(s.stem) > 0)


@pytest.mark.xfail(strict=True, reason="kafkalog's producer snapshot is its own format (version 2): compatibility.md")
def test_dump_log_reads_a_kafkalog_producer_snapshot(kafkalog):
    bootstrap = kafkalog.bootstrap_servers
    topic = new_topic(bootstrap, 1, segment_bytes="600")
    with Producer(bootstrap, linger_ms=0) as producer:
        for i in range(20):
            producer.send(topic, b"value-%d" % i)
            producer.flush(30)
    partition_dir = Path(kafkalog.config.log_dirs[0]) / f"{topic}-0"
    snapshots = sorted(partition_dir.glob("*.snapshot"))
    assert snapshots
    proc = run_tool("kafka-dump-log", "--files", str(snapshots[-1]))
    assert "unknown file version" not in proc.stderr
    assert re.search(r"producerId: \d+ producerEpoch: 0 .*lastSequence: \d+", proc.stdout)
