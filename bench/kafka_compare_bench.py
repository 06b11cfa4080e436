"""kafkalog against Apache Kafka 3.9.1 on the same machine in the same run (issue 25): broker MB/s, produce
latency and broker CPU, and Spark's format("kafkalog") against Spark's JVM format("kafka").

One ZooKeeper server (the project's) serves both systems, each under its own chroot. For each system and
each topology the brokers are started, measured and stopped before the next (never both at once):

* topologies: ``one_broker`` (one broker, topic RF 1, producers with acks=1) and ``three_brokers`` (three
  brokers, topic RF 3 with ``min.insync.replicas=2``, producers with acks=all). Topics have
  ``PARTITIONS`` partitions, values are ``RECORD_BYTES`` bytes, uncompressed. Both systems get the same
  broker settings (``broker_settings``): internal topics at the topology's replication factor and no
  initial rebalance delay; kafkalog brokers are processes (``EmbeddedCluster``), Kafka brokers are JVMs
  (``tests.compat.kafka_broker.KafkaBroker``, serial GC, a small heap).
* drivers, the same settings against both systems:
  - ``perf_tools``: Kafka 4.4's ``kafka-producer-perf-test`` (``--throughput -1``, linger.ms, batch.size)
    and then ``kafka-consumer-perf-test`` over what it wrote; their summary lines are parsed
    (``parse_producer_summary``, ``parse_consumer_summary``): produce MB/s and the tool's p50/p99 send ->
    acknowledgement latency; consume MB/s as the tool's ``fetch.MB.sec`` (group join excluded, the
    rate with it is kept as ``mb_per_s_with_join``); then Kafka's ``EndToEndLatency`` tool
    (kafka-e2e-latency: one record at a time, sent and awaited by a consumer, on a fresh one-partition
    topic at the topology's replication factor): its p50/p99 produce -> consume latency.
  - ``confluent_kafka``: a librdkafka Producer (same linger.ms and batch.size) sending as fast as its
    queue allows, latency from each message's ``latency()`` (send -> acknowledgement); then a Consumer
    assigned every partition from the start, reading everything back.
  Each driver phase records the CPU seconds (user + system, ``/proc``) its broker processes and their
  descendants used meanwhile, and MB/s uses 10**6 bytes of record values (the perf tools' own MB is
  2**20: their figures are converted).
* Spark (one-broker topology of each system, one local[2] session for the whole run): the same cached
  DataFrame (key, ``RECORD_BYTES`` value) written with ``format("kafkalog")`` and with ``format("kafka")``
  (Spark's connector, spark-sql-kafka 4.2.0) into two topics of ``PARTITIONS`` partitions (after a
  warm-up write of up to 100,000 rows with each format), then each topic read by both formats into the noop sink (after
  a warm-up read). Each Spark figure is one timed run.

Everything above runs ``--rounds`` times (3; 1 with ``--quick``), alternating which system goes first;
``rounds`` in the JSON holds each round, ``results`` the median of every figure over the rounds.
Ratios are kafkalog / Kafka (of the medians) of every MB/s, latency and CPU figure (above 1: kafkalog faster for MB/s,
slower for latency, costlier for CPU). A missing peer stops the run with the one line of
``tests.compat.peers`` naming ``make peers``. Writes ``bench/results/kafka_compare.json`` and
``kafka_compare.png``; ``--quick`` (small inputs, a smoke run) writes under a temporary folder unless
``--out`` is given. Run: ``python -m bench.kafka_compare_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import percentile, wait_for  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PARTITIONS = 3
RECORD_BYTES = 1024
LINGER_MS = 5
BATCH_BYTES = 262_144
MIB = 1024 * 1024
SYSTEMS = ("kafkalog", "kafka")
TOPOLOGIES = {"one_broker": (1, "1"), "three_brokers": (3, "all")}  # brokers, acks (RF = brokers)


class PerfToolOutputError(ValueError):
    """A perf tool's output lacks the summary line this benchmark reads."""


# -- the perf tools' summary lines -----------------------------------------------------------------
# kafka-producer-perf-test, last line:
#   "<n> records sent, <r> records/sec (<mb> MB/sec), <avg> ms avg latency, <max> ms max latency,
#    <p50> ms 50th, <p95> ms 95th, <p99> ms 99th, <p999> ms 99.9th."
_PRODUCER_SUMMARY = re.compile(
    r"^(?P<records>\d+) records sent, (?P<records_per_s>[\d.]+) records/sec \((?P<mib_per_s>[\d.]+) MB/sec\), "
    r"(?P<avg_ms>[\d.]+) ms avg latency, (?P<max_ms>[\d.]+) ms max latency, (?P<p50_ms>\d+) ms 50th, "
    r"(?P<p95_ms>\d+) ms 95th, (?P<p99_ms>\d+) ms 99th, (?P<p999_ms>\d+) ms 99.9th\.$"
)


def parse_producer_summary(stdout: str) -> dict[str, float]:
    """The figures of kafka-producer-perf-test's final summary line (MB as the tool's 2**20 bytes)."""
    for line in reversed(stdout.strip().splitlines()):
        if match := _PRODUCER_SUMMARY.match(line.strip()):
            return {k: (int(v) if k == "records" else float(v)) for k, v in match.groupdict().items()}
    raise PerfToolOutputError(f"no kafka-producer-perf-test summary line in: {stdout[-500:]!r}")


def parse_consumer_summary(stdout: str) -> dict[str, str]:
    """kafka-consumer-perf-test's last two lines, a header of ``, ``-separated names and one row of values
    (``start.time``, ``data.consumed.in.MB``, ``fetch.MB.sec``, ...), as a dict of strings."""
    lines = [line for line in stdout.strip().splitlines() if ", " in line]
    for header, row in zip(reversed(lines[:-1]), reversed(lines[1:])):
        names, values = header.split(", "), row.split(", ")
        if "data.consumed.in.MB" in names and len(names) == len(values):
            return dict(zip(names, values, strict=True))
    raise PerfToolOutputError(f"no kafka-consumer-perf-test summary in: {stdout[-500:]!r}")


# EndToEndLatency (kafka-e2e-latency), last two lines:
#   "Avg latency: <avg> ms"
#   "Percentiles: 50th = <p50>, 99th = <p99>, 99.9th = <p999>"
_END_TO_END_AVG = re.compile(r"^Avg latency: (?P<avg_ms>[\d.]+) ms$", re.MULTILINE)
_END_TO_END_PERCENTILES = re.compile(
    r"^Percentiles: 50th = (?P<p50_ms>\d+), 99th = (?P<p99_ms>\d+), 99\.9th = (?P<p999_ms>\d+)$", re.MULTILINE
)


def parse_end_to_end_summary(stdout: str) -> dict[str, float]:
    """The average and percentiles (ms) that Kafka's EndToEndLatency tool prints last."""
    avg, percentiles = _END_TO_END_AVG.search(stdout), _END_TO_END_PERCENTILES.search(stdout)
    if avg is None or percentiles is None:
        raise PerfToolOutputError(f"no EndToEndLatency summary in: {stdout[-500:]!r}")
    return {k: float(v) for k, v in (avg.groupdict() | percentiles.groupdict()).items()}


# -- CPU of broker processes ------------------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(pid))
    return tree


def cpu_seconds(pids: Iterable[int]) -> float:
    """User + system CPU seconds so far of ``pids`` and their live descendants (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    tree, todo, total = _children(), list(pids), 0
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(stat[11]) + int(stat[12])
        except (OSError, IndexError, ValueError):
            pass
        todo += tree.get(pid, [])
    return total / tick


def measured(pids: list[int], run: Callable[[], dict]) -> dict:
    """``run()``'s figures plus ``broker_cpu_s``, the CPU the broker processes used while it ran."""
    before = cpu_seconds(pids)
    figures = run()
    figures["broker_cpu_s"] = round(cpu_seconds(pids) - before, 2)
    return figures


# -- brokers ----------------------------------------------------------------------------------------
def broker_settings(brokers: int) -> dict[str, str]:
    """Broker settings both systems get (on top of their defaults)."""
    return {
        "offsets.topic.num.partitions": "4",
        "offsets.topic.replication.factor": str(brokers),
        "transaction.state.log.replication.factor": str(brokers),
        "group.initial.rebalance.delay.ms": "0",
        "num.partitions": "1",
        "default.replication.factor": str(brokers),
    }


class KafkalogBrokers:
    """kafkalog brokers as processes (``EmbeddedCluster``) on ``zookeeper_connect`` (chroot included).

    ``extra`` adds or overrides broker settings on top of ``broker_settings`` (``EmbeddedCluster``'s
    placeholders included, e.g. ``listeners=PLAINTEXT://{host}:{port},SSL://{host}:{port1}``)."""

    def __init__(
        self, brokers: int, zookeeper_connect: str, data_dir: Path, extra: Mapping[str, str] | None = None
    ) -> None:
        from broker.embedded_cluster import EmbeddedCluster

        self.cluster = EmbeddedCluster(
            brokers,
            data_dir=data_dir,
            zookeeper_connect=zookeeper_connect,
            broker_config=broker_settings(brokers) | dict(extra or {}),
        )

    def __enter__(self) -> KafkalogBrokers:
        self.cluster.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cluster.stop()

    @property
    def bootstrap_servers(self) -> str:
        return self.cluster.bootstrap_servers

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.cluster.processes.values()]


class KafkaBrokers:
    """Apache Kafka 3.9.1 brokers (``KafkaBroker``) with ids 1..n on one ZooKeeper chroot.

    ``listeners`` (name -> security protocol) and ``extra`` (server.properties on top of ``broker_settings``)
    go to every ``KafkaBroker`` as its own ``listeners`` and ``extra``; ``jvm_options`` replaces
    ``KafkaBroker``'s test JVM options (None: kept)."""

    def __init__(
        self,
        brokers: int,
        zookeeper_connect: str,
        data_dir: Path,
        extra: Mapping[str, str] | None = None,
        listeners: Mapping[str, str] | None = None,
        jvm_options: Sequence[str] | None = None,
    ) -> None:
        from tests.compat.kafka_broker import JVM_OPTIONS, KafkaBroker
        from tests.compat.peers import KAFKA_39

        settings = broker_settings(brokers) | dict(extra or {})
        self.brokers = [
            KafkaBroker(
                KAFKA_39,
                data_dir / f"broker-{i}",
                zookeeper_connect=zookeeper_connect,
                broker_id=i,
                extra=settings,
                listeners=dict(listeners or {}),
                jvm_options=JVM_OPTIONS if jvm_options is None else jvm_options,
            )
            for i in range(1, brokers + 1)
        ]

    def __enter__(self) -> KafkaBrokers:
        try:
            for broker in self.brokers:  # from this thread: the JVMs die with the thread that started them
                broker.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for broker in reversed(self.brokers):
            broker.stop()

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.bootstrap_servers for b in self.brokers if b.port)

    @property
    def pids(self) -> list[int]:
        return [b.process.pid for b in self.brokers if b.process is not None]


def create_topic(bootstrap: str, brokers: int, prefix: str) -> str:
    """A fresh topic of ``PARTITIONS`` partitions at replication factor ``brokers``, every replica in sync."""
    from spark_kafkalog.client import AdminClient, NewTopic

    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    config = {"min.insync.replicas": "2"} if brokers > 1 else {}
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, PARTITIONS, brokers, config)])

        def in_sync() -> bool:
            parts = admin.describe_topics([name])[name].partitions
            return len(parts) == PARTITIONS and all(p.leader >= 0 and len(p.isr) == brokers for p in parts)

        wait_for(in_sync, 60, f"{name} created with every replica in sync")
    return name


# -- drivers ----------------------------------------------------------------------------------------
def _mb_per_s(nbytes: float, seconds: float) -> float:
    return round(nbytes / 1e6 / seconds, 2)


def perf_tools(bootstrap: str, brokers: int, acks: str, records: int, e2e_records: int, pids: list[int]) -> dict:
    """kafka-producer-perf-test then kafka-consumer-perf-test over the same topic, then EndToEndLatency (see
    the module docstring)."""
    from tests.compat.tools import run_tool

    topic = create_topic(bootstrap, brokers, "perf")
    props = [f"bootstrap.servers={bootstrap}", f"acks={acks}", f"linger.ms={LINGER_MS}", f"batch.size={BATCH_BYTES}"]
    props += ["compression.type=none", "enable.idempotence=false"]

    def produce() -> dict:
        stdout = run_tool(
            "kafka-producer-perf-test", "--topic", topic, "--num-records", str(records),
            "--record-size", str(RECORD_BYTES), "--throughput", "-1", "--command-property", *props,
            timeout_s=600,
        ).stdout  # fmt: skip
        s = parse_producer_summary(stdout)
        if s["records"] != records:
            raise RuntimeError(f"kafka-producer-perf-test sent {s['records']} records, not {records}")
        return {
            "records": records,
            "mb_per_s": round(s["mib_per_s"] * MIB / 1e6, 2),
            "records_per_s": s["records_per_s"],
            "p50_ms": s["p50_ms"],
            "p99_ms": s["p99_ms"],
            "summary": stdout.strip().splitlines()[-1],
        }

    def consume() -> dict:
        stdout = run_tool(
            "kafka-consumer-perf-test", "--bootstrap-server", bootstrap, "--topic", topic,
            "--num-records", str(records), "--timeout", "120000", "--group", f"perf-{uuid.uuid4().hex[:8]}",
            timeout_s=600,
        ).stdout  # fmt: skip
        s = parse_consumer_summary(stdout)
        if int(s["data.consumed.in.nMsg"]) < records:
            raise RuntimeError(f"kafka-consumer-perf-test read {s['data.consumed.in.nMsg']} records, not {records}")
        return {
            "records": int(s["data.consumed.in.nMsg"]),
            "mb_per_s": round(float(s["fetch.MB.sec"]) * MIB / 1e6, 2),
            "mb_per_s_with_join": round(float(s["MB.sec"]) * MIB / 1e6, 2),
            "group_join_ms": int(s["rebalance.time.ms"]),
            "summary": stdout.strip().splitlines()[-2:],
        }

    def end_to_end() -> dict:
        stdout = run_tool(
            "org.apache.kafka.tools.EndToEndLatency", "--bootstrap-server", bootstrap,
            "--topic", f"e2e-{uuid.uuid4().hex[:8]}", "--num-records", str(e2e_records),
            "--producer-acks", acks, "--record-size", str(RECORD_BYTES), timeout_s=600,
        ).stdout  # fmt: skip
        s = parse_end_to_end_summary(stdout)
        return {"records": e2e_records, "p50_ms": s["p50_ms"], "p99_ms": s["p99_ms"], "avg_ms": s["avg_ms"]}

    return {
        "produce": measured(pids, produce),
        "consume": measured(pids, consume),
        "end_to_end": measured(pids, end_to_end),
    }


def confluent(
    bootstrap: str,
    brokers: int,
    acks: str,
    records: int,
    pids: list[int],
    client_config: Mapping[str, str] | None = None,
    topic: str | None = None,
) -> dict:
    """A confluent-kafka Producer then Consumer over the same topic (see the module docstring).

    ``client_config`` adds librdkafka settings to both clients (``security.protocol``, ``ssl.ca.location``,
    ``sasl.*``: a secured listener at ``bootstrap``); ``topic`` is an existing topic of ``PARTITIONS``
    partitions to use instead of a fresh one created through ``bootstrap`` (which must then be PLAINTEXT)."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic = topic or create_topic(bootstrap, brokers, "confluent")
    secured = dict(client_config or {})
    value = os.urandom(RECORD_BYTES)

    def produce() -> dict:
        p = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": acks,
                "linger.ms": LINGER_MS,
                "batch.size": BATCH_BYTES,
                "compression.type": "none",
                "enable.idempotence": False,
                "queue.buffering.max.messages": 1_000_000,
                "queue.buffering.max.kbytes": 1_048_576,
            }
            | secured
        )
        latencies: list[float] = []
        failed: list = []

        def on_delivery(err, msg) -> None:
            if err is not None:
                failed.append(err)
            else:
                latencies.append(msg.latency() * 1000)

        p.produce(topic, value, on_delivery=on_delivery)  # connect and learn the leaders first
        p.flush(30)
        latencies.clear()
        started = time.perf_counter()
        for i in range(records):
            while True:
                try:
                    p.produce(topic, value, on_delivery=on_delivery)
                    break
                except BufferError:
                    p.poll(0.005)
            if i % 1000 == 0:
                p.poll(0)
        left = p.flush(300)
        seconds = time.perf_counter() - started
        if failed or left:
            raise RuntimeError(f"{len(failed)} deliveries failed ({failed[:1]}), {left} not delivered")
        latencies.sort()
        return {
            "records": records,
            "mb_per_s": _mb_per_s(records * RECORD_BYTES, seconds),
            "records_per_s": round(records / seconds),
            "p50_ms": round(percentile(latencies, 0.5), 2),
            "p99_ms": round(percentile(latencies, 0.99), 2),
        }

    def consume() -> dict:
        c = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"bench-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
            | secured
        )
        c.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        expected = records + 1
        seen = nbytes = 0
        started = time.perf_counter()
        deadline = time.monotonic() + 300
        try:
            while seen < expected and time.monotonic() < deadline:
                for msg in c.consume(10_000, 1.0):
                    if msg.error() is None:
                        seen += 1
                        nbytes += len(msg.value())
            seconds = time.perf_counter() - started
        finally:
            c.close()
        if seen < expected:
            raise RuntimeError(f"confluent-kafka Consumer read {seen} of {expected} records")
        return {"records": seen, "mb_per_s": _mb_per_s(nbytes, seconds), "records_per_s": round(seen / seconds)}

    return {"produce": measured(pids, produce), "consume": measured(pids, consume)}


# -- Spark ------------------------------------------------------------------------------------------
CONNECTOR_JARS = ("spark-sql-kafka-0-10_", "spark-token-provider-kafka-0-10_", "kafka-clients-", "commons-pool2-")


def spark_session():
    """A local[2] session with ``kafkalog`` registered and Spark's Kafka connector's jars in ``spark.jars``."""
    from spark_kafkalog.datasource import kafkalog_session
    from tests.compat.peers import SPARK_KAFKA, classpath

    classpath(SPARK_KAFKA)  # PeerMissingError naming `make peers`
    jars = sorted(str(p) for p in SPARK_KAFKA.dir.glob("*.jar") if p.name.startswith(CONNECTOR_JARS))
    conf = {
        "spark.jars": ",".join(jars),
        "spark.ui.enabled": "false",
        "spark.driver.memory": "768m",
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.showConsoleProgress": "false",
    }
    spark = kafkalog_session("local[2]", "kafkalog-vs-kafka-bench", conf)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_cases(spark, bootstrap: str, records: int, pids: list[int]) -> dict:
    """The same DataFrame written by each format into its own topic, then each topic read by each format."""
    df = spark.range(records).selectExpr(
        "CAST(CONCAT('key-', id) AS BINARY) AS key", f"CAST(REPEAT('x', {RECORD_BYTES}) AS BINARY) AS value"
    )
    df.cache().count()
    nbytes = records * RECORD_BYTES
    topics = {fmt: create_topic(bootstrap, 1, f"spark-{fmt}") for fmt in ("kafkalog", "kafka")}
    out: dict = {"write": {}, "read": {}}

    def timed(action: Callable[[], object]) -> Callable[[], dict]:
        def run() -> dict:
            started = time.perf_counter()
            action()
            seconds = time.perf_counter() - started
            return {"seconds": round(seconds, 3), "mb_per_s": _mb_per_s(nbytes, seconds)}

        return run

    warm_up = create_topic(bootstrap, 1, "spark-warm-up")
    # Warm-up writes of each format (Python workers started, the JVM's code paths compiled): the first system
    # measured would otherwise pay for a cold Spark session.
    for fmt in topics:
        df.limit(min(records, 100_000)).write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option(
            "topic", warm_up
        ).mode("append").save()
    for fmt, topic in topics.items():
        writer = df.write.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
        out["write"][fmt] = measured(pids, timed(lambda w=writer: w.mode("append").save()))
    for source, topic in topics.items():
        for fmt in ("kafkalog", "kafka"):
            reader = spark.read.format(fmt).option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            reader.load().write.format("noop").mode("overwrite").save()  # warm-up, and the count check below
            count = reader.load().count()
            if count != records:
                raise RuntimeError(f"format({fmt!r}) read {count} records of {topic}, {records} were written")
            run = timed(lambda r=reader: r.load().write.format("noop").mode("overwrite").save())
            out["read"][f"{fmt}_of_{source}_written"] = measured(pids, run)
    df.unpersist()
    return out


# -- the run ----------------------------------------------------------------------------------------
def median_of(rounds: list) -> object:
    """The rounds' results as one: the median of every number found at the same place in each round, other
    values (the perf tools' summary lines) from the first round."""
    first = rounds[0]
    if isinstance(first, dict):
        return {k: median_of([r[k] for r in rounds]) for k in first}
    if isinstance(first, int | float) and not isinstance(first, bool):
        return round(statistics.median(rounds), 3)
    return first


def ratios(kafkalog: object, kafka: object) -> object:
    """kafkalog / Kafka for every number found at the same place in both results (strings dropped)."""
    if isinstance(kafkalog, dict) and isinstance(kafka, dict):
        out = {k: ratios(kafkalog[k], kafka[k]) for k in kafkalog if k in kafka}
        return {k: v for k, v in out.items() if v not in (None, {})}
    if isinstance(kafkalog, int | float) and isinstance(kafka, int | float) and not isinstance(kafkalog, bool):
        return round(kafkalog / kafka, 3) if kafka else None
    return None


def spark_format_ratios(spark: dict) -> dict[str, float]:
    """format("kafkalog") / format("kafka") MB/s on the same broker: the write, and the read of each topic."""
    out = {"write": round(spark["write"]["kafkalog"]["mb_per_s"] / spark["write"]["kafka"]["mb_per_s"], 3)}
    for source in ("kafkalog", "kafka"):
        ours, theirs = (spark["read"][f"{fmt}_of_{source}_written"]["mb_per_s"] for fmt in ("kafkalog", "kafka"))
        out[f"read_of_{source}_written"] = round(ours / theirs, 3)
    return out


def peer_versions() -> dict[str, str]:
    from tests.compat.peers import KAFKA_39, SPARK_KAFKA, TOOLS_44, classpath

    for peer in (KAFKA_39, TOOLS_44, SPARK_KAFKA):
        classpath(peer)  # PeerMissingError naming `make peers`, before anything starts
    return {"broker": KAFKA_39.what, "perf_tools": TOOLS_44.what, "spark_connector": SPARK_KAFKA.what}


def main(argv: list[str] | None = None) -> dict:
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs (a smoke run), output in a temp folder")
    parser.add_argument("--records", type=int, default=None, help="records per driver phase (default 500,000)")
    parser.add_argument("--spark-records", type=int, default=None, help="rows per Spark case (default 500,000)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of everything, medians kept (default 3)")
    parser.add_argument("--out", type=Path, default=None, help="the JSON to write (the PNG goes next to it)")
    args = parser.parse_args(argv)
    records = args.records or (20_000 if args.quick else 500_000)
    spark_records = args.spark_records or (20_000 if args.quick else 500_000)
    e2e_records = 300 if args.quick else 10_000
    rounds = args.rounds or (1 if args.quick else 3)
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix="kafka-compare-quick-")) if args.quick else RESULTS
        args.out = folder / "kafka_compare.json"
    try:
        peers = peer_versions()
    except Exception as exc:
        from tests.compat.peers import PeerMissingError

        if isinstance(exc, PeerMissingError):
            raise SystemExit(str(exc)) from None
        raise

    from broker.cluster.zookeeper_server import ZooKeeperServer

    data_dir = Path(tempfile.mkdtemp(prefix="kafka-compare-bench-"))
    result: dict = {
        "machine": machine_info(["confluent-kafka", "pyspark"]),
        "quick": args.quick,
        "peers": peers,
        "settings": {
            "partitions": PARTITIONS,
            "record_bytes": RECORD_BYTES,
            "rounds": rounds,
            "records_per_phase": records,
            "end_to_end_records": e2e_records,
            "spark_records": spark_records,
            "linger_ms": LINGER_MS,
            "batch_size": BATCH_BYTES,
            "compression": "none",
            "mb": "10**6 bytes of record values",
            "topologies": {t: {"brokers": n, "replication_factor": n, "acks": a} for t, (n, a) in TOPOLOGIES.items()},
            "min_insync_replicas_rf3": 2,
        },
        "load_average": {"start": os.getloadavg()},
        "rounds": [],
    }
    spark = spark_session()
    zookeeper = ZooKeeperServer(data_dir / "zookeeper").start()
    try:
        for r in range(rounds):
            runs: dict = {s: {} for s in SYSTEMS}
            for n, (topology, (brokers, acks)) in enumerate(TOPOLOGIES.items()):
                # neither system always measured first: alternated per topology and per round
                for system in SYSTEMS if (n + r) % 2 == 0 else reversed(SYSTEMS):
                    name = f"{system}-{topology}-{r + 1}"
                    kind = KafkalogBrokers if system == "kafkalog" else KafkaBrokers
                    print(f"== round {r + 1}, {system}, {topology}: starting {brokers} broker(s)", flush=True)
                    with kind(brokers, f"{zookeeper.connect_string}/{name}", data_dir / name) as cluster:
                        bs, pids = cluster.bootstrap_servers, cluster.pids
                        case = {
                            "perf_tools": perf_tools(bs, brokers, acks, records, e2e_records, pids),
                            "confluent_kafka": confluent(bs, brokers, acks, records, pids),
                        }
                        if topology == "one_broker":
                            case["spark"] = spark_cases(spark, bs, spark_records, pids)
                    runs[system][topology] = case
                    shutil.rmtree(data_dir / name, ignore_errors=True)  # kept only on a failure
                    print(f"{system} {topology}: {json.dumps(case)}", flush=True)
                    result["load_average"][f"after_{name}"] = os.getloadavg()
            result["rounds"].append(runs)
    finally:
        zookeeper.stop()
        spark.stop()
    result["results"] = median_of(result["rounds"])
    result["ratios"] = ratios(result["results"]["kafkalog"], result["results"]["kafka"])
    result["spark_format_ratios"] = {
        s: spark_format_ratios(result["results"][s]["one_broker"]["spark"]) for s in SYSTEMS
    }
    print(json.dumps(result["ratios"], indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("kafka_compare", result, args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")
    shutil.rmtree(data_dir, ignore_errors=True)
    return result


if __name__ == "__main__":
    main()
