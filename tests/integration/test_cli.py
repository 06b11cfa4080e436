"""The `kafkalog` console commands, run as real processes against one `kafkalog cluster up` of two brokers
(topics, produce, consume, offsets, dump-log, a dying broker); its last tests stop and restart that cluster."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from tests.waiting import wait_until

from .cli_process import CLI, NOT_A_HANG_S, LineReader, fails_in_one_line, read_line, run

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cli_cluster(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli-cluster")
    proc = subprocess.Popen(
        [*CLI, "cluster", "up", "--brokers", "2", "--data-dir", str(data), "--restart-failed"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = read_line(proc, "bootstrap.servers=")
    yield proc, line.split("=", 1)[1], data
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(60)


def test_topics_produce_consume(cli_cluster):
    _, bootstrap, _ = cli_cluster
    assert re.fullmatch(r"127\.0\.0\.1:\d+,127\.0\.0\.1:\d+", bootstrap)
    r = run(
        "topics",
        "create",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "cli-t",
        "--partitions",
        "3",
        "--config",
        "retention.ms=60000",
    )
    assert r.returncode == 0, r.stderr
    r = run("topics", "create", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partitions", "3")
    assert r.returncode == 1 and "already exists" in r.stderr
    assert "cli-t" in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()
    desc = run("topics", "describe", "--bootstrap-server", bootstrap, "--topic", "cli-t").stdout
    assert "PartitionCount: 3" in desc and desc.count("Leader: ") == 3
    assert "ReplicationFactor: 2" in desc  # cluster up: default.replication.factor is min(3, brokers)

    lines = "".join(f"k{i % 3}:value {i}\n" for i in range(30))
    r = run(
        "produce",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "cli-t",
        "--key-separator",
        ":",
        "--acks",
        "all",
        stdin=lines,
    )
    assert r.returncode == 0, r.stderr
    assert "produced 30 records" in r.stderr
    r = run(
        "consume", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--from-beginning", "--max-messages", "30",
        "--timeout-ms", "60000", "--format", "%k\\t%s\\t%p\\t%o\\n",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Processed a total of 30 messages" in r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == 30
    assert sorted(int(v.split()[1]) for _, v, _, _ in rows) == list(range(30))
    by_key = {}
    for key, _, part, _ in rows:
        by_key.setdefault(key, set()).add(part)
    assert all(len(parts) == 1 for parts in by_key.values())  # one key, one partition
    r = run(
        "consume", "--bootstrap-server", bootstrap, "--topic", "cli-t", "--partition", "0", "--offset", "1",
        "--max-messages", "2", "--property", "print.offset=true",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == ["Offset:1", "Offset:2"]

    assert run("topics", "delete", "--bootstrap-server", bootstrap, "--topic", "cli-t").returncode == 0
    assert "cli-t" not in run("topics", "list", "--bootstrap-server", bootstrap).stdout.split()


def test_duplicate_broker_id_fails_clearly(cli_cluster, tmp_path):
    _, _, data = cli_cluster
    existing = (data / "broker-1" / "server.properties").read_text()
    zk = re.search(r"zookeeper.connect=(.*)", existing).group(1)
    cfg = tmp_path / "server.properties"
    cfg.write_text(
        f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:0\nlog.dirs={tmp_path / 'logs'}\nzookeeper.connect={zk}\n"
    )
    line = fails_in_one_line("broker", "start", "--config", str(cfg))
    assert "broker.id 1 is already registered" in line


def test_cluster_up_twice_on_one_data_dir_refuses_and_leaves_the_running_cluster_alone(cli_cluster):
    proc, bootstrap, data = cli_cluster
    zoo_cfg = data / "zookeeper" / "zoo.cfg"
    before = (zoo_cfg.read_bytes(), zoo_cfg.stat().st_mtime_ns, sorted(p.name for p in data.iterdir()))
    line = fails_in_one_line("cluster", "up", "--brokers", "2", "--data-dir", str(data))
    assert f"cluster data dir {data} is in use by another kafkalog process (pid {proc.pid})" in line
    line = fails_in_one_line("zookeeper", "start", "--data-dir", str(data / "zookeeper"), "--port", "0")
    assert f"ZooKeeper data dir {data / 'zookeeper'} is in use" in line
    assert (zoo_cfg.read_bytes(), zoo_cfg.stat().st_mtime_ns, sorted(p.name for p in data.iterdir())) == before
    assert proc.poll() is None
    assert run("topics", "list", "--bootstrap-server", bootstrap).returncode == 0


def _admin_topic(bootstrap: str, name: str, partitions: int, **config: str) -> None:
    from spark_kafkalog.client import AdminClient, NewTopic

    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, config)])


def _produce(bootstrap: str, topic: str, records, **kwargs) -> list:
    from spark_kafkalog.client import Producer

    with Producer(bootstrap, acks="all", **kwargs) as producer:
        futures = [producer.send(topic, **record) for record in records]
        producer.flush()
        return [f.result(30) for f in futures]


def test_consume_prints_values_only_by_default_and_kafkas_properties_and_kcat_formats(cli_cluster):
    _, bootstrap, _ = cli_cluster
    _admin_topic(bootstrap, "cli-fmt", 1)
    _produce(
        bootstrap,
        "cli-fmt",
        [
            {"value": b"v0", "key": b"k0", "timestamp_ms": 1_700_000_000_000, "headers": [("h1", b"x"), ("h2", None)]},
            {"value": None, "key": None, "timestamp_ms": 1_700_000_000_001},
        ],
    )
    common = ("consume", "--bootstrap-server", bootstrap, "--topic", "cli-fmt", "--from-beginning")
    r = run(*common, "--max-messages", "2")
    assert (r.returncode, r.stdout) == (0, "v0\nnull\n"), r.stderr
    props = ["print.timestamp", "print.partition", "print.offset", "print.headers", "print.key"]
    r = run(*common, "--max-messages", "2", *[a for p in props for a in ("--property", f"{p}=true")])
    assert r.stdout.splitlines() == [
        "CreateTime:1700000000000\tPartition:0\tOffset:0\th1:x,h2:null\tk0\tv0",
        "CreateTime:1700000000001\tPartition:0\tOffset:1\tNO_HEADERS\tnull\tnull",
    ], r.stderr
    r = run(
        *common, "--max-messages", "2", "--property", "print.key=true", "--property", "key.separator=::",
        "--property", "print.value=false", "--property", "null.literal=<none>",
    )  # fmt: skip
    assert r.stdout.splitlines() == ["k0", "<none>"], r.stderr
    r = run(*common, "--max-messages", "2", "--format", "%t %p %o %T [%k] [%s] %K %S {%h} 100%%\\n")
    assert r.stdout.splitlines() == [
        "cli-fmt 0 0 1700000000000 [k0] [v0] 2 2 {h1=x,h2=} 100%",
        "cli-fmt 0 1 1700000000001 [] [] -1 -1 {} 100%",
    ], r.stderr
    r = run(*common, "--max-messages", "1", "--isolation-level", "read_committed")
    assert r.stdout == "v0\n", r.stderr


def test_consume_isolation_level_read_committed_skips_aborted_transactions(cli_cluster):
    from spark_kafkalog.client import Producer

    _, bootstrap, _ = cli_cluster
    _admin_topic(bootstrap, "cli-txn", 1)
    with Producer(bootstrap, transactional_id="cli-txn-producer") as producer:
        producer.init_transactions(30)
        for outcome in ("committed", "aborted", "committed-again"):
            producer.begin_transaction()
            producer.send("cli-txn", value=outcome.encode())
            producer.send("cli-txn", value=outcome.encode() + b"-2")
            producer.flush()
            if outcome == "aborted":
                producer.abort_transaction(30)
            else:
                producer.commit_transaction(30)
    common = ("consume", "--bootstrap-server", bootstrap, "--topic", "cli-txn", "--from-beginning", "--timeout-ms")
    r = run(*common, "3000", "--isolation-level", "read_committed")
    assert r.stdout.split() == ["committed", "committed-2", "committed-again", "committed-again-2"], r.stderr
    r = run(*common, "3000")  # read_uncommitted, kafka-console-consumer's default: aborted records too
    assert r.stdout.split() == [
        "committed", "committed-2", "aborted", "aborted-2", "committed-again", "committed-again-2"
    ], r.stderr  # fmt: skip


def test_consume_follows_new_records_across_partitions_until_sigint(cli_cluster):
    _, bootstrap, _ = cli_cluster
    _admin_topic(bootstrap, "cli-follow", 3)
    _produce(bootstrap, "cli-follow", [{"value": b"old-%d" % i} for i in range(6)])
    proc = subprocess.Popen(
        [*CLI, "consume", "--bootstrap-server", bootstrap, "--topic", "cli-follow", "--format", "%p:%s\\n"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen: list[str] = []
        out = LineReader(proc.stdout)
        sent = 0

        def a_round_shows_six() -> bool:
            # one record per partition per round, until the consumer (positioned at the end) shows six
            nonlocal sent
            _produce(bootstrap, "cli-follow", [{"value": b"new-%d" % (sent + p), "partition": p} for p in range(3)])
            sent += 3
            while (line := out.next_line(0.5)) is not None:
                seen.append(line)
            return len(seen) >= 6

        wait_until(a_round_shows_six, 90, "the following consumer to print six new records")
        assert not any(":old-" in line for line in seen)  # started at the end
        assert {line.split(":")[0] for line in seen} == {"0", "1", "2"}  # every partition, interleaved
        for p in range(3):  # nothing skipped in a partition once it started
            rounds = [int(line.split("new-")[1]) // 3 for line in seen if line.startswith(f"{p}:")]
            assert rounds == list(range(rounds[0], rounds[0] + len(rounds))), seen
        assert proc.poll() is None  # it follows: no exit at the end of the log
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert f"Processed a total of {len(seen)} messages" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_consume_timeout_ms_exits_when_no_record_arrives(cli_cluster):
    _, bootstrap, _ = cli_cluster
    _admin_topic(bootstrap, "cli-idle", 2)
    _produce(bootstrap, "cli-idle", [{"value": b"only"}])
    started = time.monotonic()
    r = run(
        "consume", "--bootstrap-server", bootstrap, "--topic", "cli-idle", "--from-beginning", "--timeout-ms", "1500"
    )
    took = time.monotonic() - started
    assert (r.returncode, r.stdout) == (0, "only\n"), r.stderr
    assert 1.5 <= took < NOT_A_HANG_S + 15, took
    r = run("consume", "--bootstrap-server", bootstrap, "--topic", "cli-idle", "--partition", "1", "--offset", "latest",
            "--timeout-ms", "500")  # fmt: skip
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    assert "Processed a total of 0 messages" in r.stderr


def test_offsets_prints_topic_partition_offset_like_kafka_get_offsets(cli_cluster):
    _, bootstrap, _ = cli_cluster
    _admin_topic(bootstrap, "cli-offs", 3)
    base = 1_700_000_000_000
    _produce(
        bootstrap,
        "cli-offs",
        [{"value": b"%d" % i, "partition": i % 2, "timestamp_ms": base + i} for i in range(10)],
    )
    r = run("offsets", "--bootstrap-server", bootstrap, "--topic", "cli-offs")
    assert (r.returncode, r.stdout) == (0, "cli-offs:0:5\ncli-offs:1:5\ncli-offs:2:0\n"), r.stderr
    r = run("offsets", "--bootstrap-server", bootstrap, "--topic", "cli-offs", "--time", "-2", "--partitions", "0,2")
    assert r.stdout == "cli-offs:0:0\ncli-offs:2:0\n", r.stderr
    # partition 0 holds timestamps base+0, +2, +4, +6, +8 at offsets 0-4; partition 1 base+1, +3, ... at 0-4
    r = run("offsets", "--bootstrap-server", bootstrap, "--topic", "cli-offs", "--time", str(base + 5))
    assert r.stdout == "cli-offs:0:3\ncli-offs:1:2\ncli-offs:2:\n", r.stderr  # no record at/after: empty
    r = run("offsets", "--bootstrap-server", bootstrap, "--topic", "cli-offs", "--time", "max-timestamp",
            "--partitions", "0-1")  # fmt: skip
    assert r.stdout == "cli-offs:0:4\ncli-offs:1:4\n", r.stderr
    r = run("offsets", "--bootstrap-server", bootstrap)
    assert "cli-offs:1:5" in r.stdout.splitlines() and "__consumer_offsets" not in r.stdout
    line = fails_in_one_line("offsets", "--bootstrap-server", bootstrap, "--topic", "cli-offs", "--partitions", "7")
    assert "topic cli-offs has no partition 7" in line
    line = fails_in_one_line("offsets", "--bootstrap-server", bootstrap, "--topic", "no-such-topic")
    assert "UNKNOWN_TOPIC_OR_PARTITION" in line


def test_topics_create_if_not_exists_and_alter_partitions(cli_cluster):
    _, bootstrap, _ = cli_cluster
    create = ("topics", "create", "--bootstrap-server", bootstrap, "--topic", "cli-alt", "--partitions", "2")
    assert run(*create).returncode == 0
    r = run(*create, "--if-not-exists")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = run("topics", "alter", "--bootstrap-server", bootstrap, "--topic", "cli-alt", "--partitions", "5")
    assert r.returncode == 0 and "now has 5 partitions" in r.stdout, r.stderr
    desc = run("topics", "describe", "--bootstrap-server", bootstrap, "--topic", "cli-alt").stdout
    assert "PartitionCount: 5" in desc and desc.count("Leader: ") == 5
    line = fails_in_one_line(
        "topics", "alter", "--bootstrap-server", bootstrap, "--topic", "cli-alt", "--partitions", "3"
    )
    assert "INVALID_PARTITIONS" in line


def test_version_prints_the_package_version():
    from spark_kafkalog import __version__

    r = run("--version")
    assert (r.returncode, r.stdout.strip()) == (0, f"kafkalog {__version__}")


def _segments(data, topic: str) -> list:
    """The segment files of ``topic``-0 on the first broker that has them, oldest first."""
    for b in (1, 2):
        files = sorted((data / f"broker-{b}" / "logs" / f"{topic}-0").glob("*.log"))
        if files:
            return files
    return []


def test_dump_log_prints_batches_records_and_index_entries_and_reports_damage(cli_cluster, tmp_path):
    _, bootstrap, data = cli_cluster
    _admin_topic(bootstrap, "cli-dump", 1, **{"segment.bytes": "600", "index.interval.bytes": "0"})
    for i in range(12):  # one batch per send: 12 batches of 3 records, ~200 bytes each
        _produce(bootstrap, "cli-dump", [{"value": b"v%d-%d" % (i, j), "key": b"k%d" % j} for j in range(3)])
    segments = wait_until(lambda: len(_segments(data, "cli-dump")) >= 2 and _segments(data, "cli-dump"), 30, "a roll")
    first = segments[0]
    r = run("dump-log", "--files", f"{first},{first.with_suffix('.index')},{first.with_suffix('.timeindex')}",
            "--print-data-log")  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    batches = [line for line in out if line.startswith("baseOffset: ")]
    assert batches and all("count: 3 " in b and "isvalid: true" in b and "compresscodec: none" in b for b in batches)
    assert batches[0].startswith("baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: ")
    assert (
        "| offset: 1 CreateTime: " in r.stdout
        and "keySize: 2 valueSize: 4 sequence: 1 headerKeys: [] key: k1 payload: v0-1" in r.stdout
    )
    entries = [line for line in out if line.startswith("offset: ")]
    assert entries[0] == "offset: 2 position: 0" and len(entries) == len(batches)  # index.interval.bytes=0
    assert sum(line.startswith("timestamp: ") for line in out) >= 1
    assert "Index problems" not in r.stdout and "invalid bytes" not in r.stdout
    positions = [int(b.split(" position: ")[1].split()[0]) for b in batches]

    damaged = tmp_path / first.name
    raw = bytearray(first.read_bytes())
    raw[positions[1] + 70] ^= 0xFF  # inside the second batch's records: its CRC no longer matches
    damaged.write_bytes(bytes(raw) + b"\x00" * 20)
    index = bytearray(first.with_suffix(".index").read_bytes())
    index[0:8], index[8:16] = index[8:16], index[0:8]  # two entries out of order
    damaged.with_suffix(".index").write_bytes(bytes(index))
    r = run("dump-log", "--files", f"{damaged},{damaged.with_suffix('.index')}", "--deep-iteration")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("baseOffset: ")]
    assert ["isvalid: false" in line for line in lines] == [i == 1 for i in range(len(batches))]
    assert f"Found 20 invalid bytes at the end of {first.name} (position {len(raw)}: " in r.stdout
    assert "payload:" not in r.stdout  # --deep-iteration alone prints no data
    assert "Index problems in" in r.stdout and "entry 1 (offset 2, position 0) does not increase" in r.stdout
    assert "is not a readable file" in fails_in_one_line("dump-log", "--files", str(tmp_path / "missing.log"), code=1)


def test_a_broker_that_dies_is_reported_restarted_and_restartable_by_hand(cli_cluster):
    proc, bootstrap, data = cli_cluster
    ports = (data / "ports.properties").read_text()
    assert f"broker.1.port={bootstrap.split(',')[0].split(':')[1]}" in ports
    pid = int(subprocess.run(["pgrep", "-f", str(data / "broker-2" / "server.properties")], capture_output=True,
                             text=True).stdout.split()[0])  # fmt: skip
    os.kill(pid, signal.SIGKILL)
    port2 = bootstrap.split(",")[1]
    err = LineReader(proc.stderr)
    died = err.wait_for(lambda line: line.startswith("kafkalog: broker 2 "))
    assert died.startswith(f"kafkalog: broker 2 ({port2}) died: killed by SIGKILL; its log: ")
    again = err.wait_for(lambda line: "serving again" in line)  # --restart-failed
    assert again.endswith(f"broker 2 serving again at {port2}")
    r = run("cluster", "restart-broker", "--data-dir", str(data), "--broker", "1", timeout=150)
    assert (r.returncode, r.stdout.strip()) == (0, f"broker 1 serving at {bootstrap.split(',')[0]}"), r.stderr
    assert run("topics", "list", "--bootstrap-server", bootstrap).returncode == 0


def test_cluster_up_stops_cleanly_on_sigint(cli_cluster):
    proc, _, data = cli_cluster
    pids = []
    for b in (1, 2):
        out = subprocess.run(
            ["pgrep", "-f", str(data / f"broker-{b}" / "server.properties")], capture_output=True, text=True
        ).stdout.split()
        pids += [int(p) for p in out]
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert "stopping the cluster" in proc.stderr.read()


def test_cluster_up_again_on_the_same_data_dir_keeps_its_ports(cli_cluster):
    first, bootstrap, data = cli_cluster
    assert first.poll() is not None  # stopped by the test above
    zk_before = re.search(r"zookeeper.connect=(.*)", (data / "broker-1" / "server.properties").read_text()).group(1)
    again = subprocess.Popen(
        [*CLI, "cluster", "up", "--brokers", "2", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line(again, "bootstrap.servers=") == f"bootstrap.servers={bootstrap}"
        zk_after = re.search(r"zookeeper.connect=(.*)", (data / "broker-1" / "server.properties").read_text()).group(1)
        assert zk_after == zk_before
    finally:
        again.send_signal(signal.SIGINT)
        assert again.wait(60) == 0


def test_cluster_up_opens_no_fault_injection_channel_unless_asked(cli_cluster):
    """The control channel lets anyone on the host inject faults: ``cluster up`` opens it only with
    ``--fault-injection`` (EmbeddedCluster, for tests, opens it by default)."""
    _, _, data = cli_cluster
    for broker in (1, 2):
        lines = (data / f"broker-{broker}" / "server.properties").read_text().splitlines()
        listener = [line.split("=", 1)[1] for line in lines if line.startswith("kafkalog.fault.injection.listener=")]
        assert listener in ([], [""])
