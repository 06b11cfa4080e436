"""Client quotas under load (issue 27): a client over its byte rate is held to it while other clients of the
same broker keep their latency.

One broker in its own process (``EmbeddedBroker``, in-process registry) with two quotas set through its
``QuotaManager``: ``clients/throttled-producer`` ``producer_byte_rate`` and ``clients/throttled-consumer``
``consumer_byte_rate``, both ``--rate`` (1 MiB/s), over Kafka's default windows (11 samples of 1 s). Values are
1 KiB, uncompressed, one partition per topic, acks=1; the kafka-python clients keep their other defaults
(``batch_size`` 16 KiB, ``max_partition_fetch_bytes`` 1 MiB).

Kafka's rate (and so kafkalog's) starts padded to 10 whole windows: a new client may move 10 windows' worth
(10 MiB) at once, and each time a sample expires (11 s later) the bytes it held may be moved again. The rate
over the first ``--seconds`` therefore holds two such bursts; ``per_second_bytes`` shows them.

* produce: kafka-python's ``KafkaProducer`` (client id ``throttled-producer``, in its own process) sends as fast
  as it can for ``--seconds`` (20 s), with at most 8 MiB sent and not yet acknowledged (kafka-python 3 has no
  ``buffer.memory``; a full buffer waits, as the Java producer's ``send`` blocks); its rate is the value bytes acknowledged within those seconds divided by
  them, also over the last half alone (after the first window's allowance: Kafka's rate starts padded to 10
  windows, so a new client may send 10 windows' worth at once). Meanwhile a second, unthrottled client
  (confluent-kafka, client id ``free-producer``, in this process) produces one value at a time (produce, then
  flush: one round trip) 100 times a second; its p99 latency is compared with the same measurement for
  ``--baseline-seconds`` before, with the broker otherwise idle (``unloaded``).
* consume: the topic is first filled with ``--preload-mib`` MiB; kafka-python's ``KafkaConsumer`` (client id
  ``throttled-consumer``, its own process, assigned partition 0 from the start) reads as fast as it can for
  ``--seconds``; its rate is the value bytes it received. The unthrottled producer's p99 latency is measured as
  before, unloaded and while the consumer runs.

The reference (``--reference kafka``, the default when ``make peers`` fetched its jars): the same two phases
against Apache Kafka 3.9.1 in ZooKeeper mode (``tests.compat.kafka_broker.KafkaBroker`` with Kafka's own JVM
flags, on a ZooKeeper of its own from pyspark's jars), the same quotas set with ``kafka-configs
--bootstrap-server`` (the Java AdminClient) on the same ``clients`` entities, the same clients and settings.
Performance targets are compared with it: ``checks.kafkalog.<phase>.p99_growth_vs_reference`` is kafkalog's
loaded/unloaded p99 over Kafka's. When it cannot run, the bench says so on stderr and ``reference.reason``
records why. Each system's run starts with ``--warm-up-seconds`` (10 s) of the unthrottled producer, not
recorded (a JVM's JIT would otherwise still be compiling during the first baseline).

Holding the throttled clients is the broker's work: it answers with ``throttle_time_ms`` and then mutes the
connection (KIP-219); the kafka-python clients' own throttle metrics are recorded to show the field arrived.
The machine's load averages are recorded (other work on a shared machine shows there). Writes
``bench/results/quota.json`` (``results.kafkalog`` and ``results.kafka``: each ``produce``, ``consume``,
``load_avg``) and ``quota.png``. Run: ``python -m bench.quota_bench [--quick] [--reference kafka|none]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from queue import Empty
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.reference import reference_plan  # noqa: E402
from bench.stats import confluent_produce_all, percentile  # noqa: E402

RESULTS = ROOT / "bench" / "results"
VALUE_BYTES = 1024
MIB = 1024 * 1024
LATENCY_RATE_PER_S = 100
_OUTSTANDING = 8 * MIB // VALUE_BYTES  # the throttled producer's buffer: values sent but not acknowledged
QUOTA_PHASES = ("produce", "consume")


def _serve(conn: Any, log_dir: str, rate: int) -> None:
    """Broker process: start, set the two quotas, send the bootstrap address, serve until told to stop."""
    from broker.server import EmbeddedBroker

    broker = EmbeddedBroker(0, zookeeper_connect=f"memory:quota-bench-{uuid.uuid4().hex[:6]}", log_dir=log_dir)
    broker.start()
    quotas = broker.broker.quotas  # type: ignore[union-attr]
    broker.call(lambda: quotas.set_quota("clients/throttled-producer", producer_byte_rate=rate))
    broker.call(lambda: quotas.set_quota("clients/throttled-consumer", consumer_byte_rate=rate))
    conn.send(broker.bootstrap_servers)
    conn.recv()
    broker.stop()


def _throttled_producer(bootstrap: str, topic: str, seconds: float, out: Any) -> None:
    """kafka-python producing ``VALUE_BYTES`` values as fast as it can for ``seconds``: ack times, throttle metrics."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        client_id="throttled-producer",
        acks=1,
        enable_idempotence=False,
        max_block_ms=300_000,
        request_timeout_ms=300_000,
        delivery_timeout_ms=600_000,
    )
    value = os.urandom(VALUE_BYTES)
    acked: list[float] = []
    sent = 0

    def ok(_metadata: Any) -> None:
        acked.append(time.monotonic())

    start = time.monotonic()
    end = start + seconds
    while time.monotonic() < end:
        if sent - len(acked) >= _OUTSTANDING:  # a full buffer: wait, as the Java producer's send blocks
            time.sleep(0.001)
            continue
        producer.send(topic, value).add_callback(ok)
        sent += 1
    out.put({"start": start, "acked": list(acked), "metrics": _throttle_metrics(producer.metrics(), "produce")})
    producer.close(timeout=0)


def _throttled_consumer(bootstrap: str, topic: str, seconds: float, out: Any) -> None:
    """kafka-python reading partition 0 from the start as fast as it can for ``seconds``: (time, bytes) per poll."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id="throttled-consumer",
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        request_timeout_ms=305_000,
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    received: list[tuple[float, int]] = []
    start = time.monotonic()
    end = start + seconds
    while (now := time.monotonic()) < end:
        batches = consumer.poll(timeout_ms=max(1, int((end - now) * 1000)))
        got = sum(len(r.value) for records in batches.values() for r in records)
        if got:
            received.append((time.monotonic(), got))
    out.put({"start": start, "received": received, "metrics": _throttle_metrics(consumer.metrics(), "fetch")})
    consumer.close()


def _throttle_metrics(metrics: dict, kind: str) -> dict:
    """kafka-python's throttle-time metrics (``produce-throttle-time-avg`` ...), whichever group holds them."""
    found = {}
    for group in metrics.values():
        for name, value in group.items():
            if name.startswith(f"{kind}-throttle-time"):
                found[name] = value
    return found


def _latencies(bootstrap: str, topic: str, seconds: float) -> list[float]:
    """confluent-kafka producing one value at a time (produce, flush), ``LATENCY_RATE_PER_S`` times a second."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "free-producer", "linger.ms": 0, "acks": 1})
    value = os.urandom(VALUE_BYTES)
    for _ in range(20):  # connection and metadata
        producer.produce(topic, value)
        producer.flush(10)
    samples = []
    interval = 1 / LATENCY_RATE_PER_S
    next_at = time.monotonic()
    end = next_at + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        producer.produce(topic, value)
        if producer.flush(30) != 0:
            raise RuntimeError("the unthrottled producer's value was not delivered within 30 s")
        samples.append(time.monotonic() - started)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))
    return samples


def _latency_summary(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "count": len(s),
        "p50_ms": round(percentile(s, 0.5) * 1000, 3),
        "p99_ms": round(percentile(s, 0.99) * 1000, 3),
        "max_ms": round(s[-1] * 1000, 3),
    }


def _rate_summary(start: float, events: list[tuple[float, int]], seconds: float, bound: int) -> dict:
    """Bytes per second within ``seconds`` of ``start``, overall and over the last half; bytes per second."""
    within = [(t - start, n) for t, n in events if t - start <= seconds]
    total = sum(n for _, n in within)
    half = seconds / 2
    last_half = sum(n for t, n in within if t > half)
    per_second = [0] * int(seconds)
    for t, n in within:
        per_second[min(int(t), len(per_second) - 1)] += n
    rate = total / seconds
    return {
        "bytes": total,
        "bytes_per_s": round(rate, 1),
        "ratio_to_bound": round(rate / bound, 4),
        "last_half_bytes_per_s": round(last_half / half, 1),
        "last_half_ratio_to_bound": round(last_half / half / bound, 4),
        "per_second_bytes": per_second,
    }


def _phase(bootstrap: str, free_topic: str, seconds: float, baseline_s: float, target: Any, args: tuple) -> dict:
    """Unloaded latency, then latency while ``target(*args, seconds, queue)`` runs in its own process."""
    unloaded = _latencies(bootstrap, free_topic, baseline_s)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, seconds, queue))
    proc.start()
    time.sleep(1.0)  # the interpreter and client starting: measure while it is loading the broker
    loaded = _latencies(bootstrap, free_topic, seconds - 2)
    deadline = time.monotonic() + seconds + 600
    while True:
        try:
            outcome = queue.get(timeout=1)
            break
        except Empty:
            if not proc.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{target.__name__} ended without a result (exit code {proc.exitcode})") from None
    proc.join(60)
    u, lo = _latency_summary(unloaded), _latency_summary(loaded)
    return {
        "outcome": outcome,
        "free_producer_latency": {"unloaded": u, "loaded": lo},
        "p99_loaded_over_unloaded": round(lo["p99_ms"] / u["p99_ms"], 3),
    }


class _KafkalogBroker:
    """kafkalog in its own process (``_serve``) with the two quotas set; ``bootstrap`` once entered."""

    def __init__(self, log_dir: str, rate: int) -> None:
        ctx = mp.get_context("spawn")
        self._parent, child = ctx.Pipe()
        self._server = ctx.Process(target=_serve, args=(child, log_dir, rate))
        self.bootstrap = ""

    def __enter__(self) -> _KafkalogBroker:
        self._server.start()
        if not self._parent.poll(120):
            self.__exit__()
            raise RuntimeError("the kafkalog broker did not start within 120 s")
        self.bootstrap = self._parent.recv()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server.is_alive():
            self._parent.send("stop")
        self._server.join(60)


class _KafkaReference:
    """Apache Kafka 3.9.1 (ZooKeeper mode, ``tests.compat.kafka_broker.KafkaBroker`` with Kafka's own JVM flags,
    ``bench.tls_bench.KAFKA_JVM_OPTIONS``) on a ZooKeeper of its own (pyspark's jars), with the two quotas set
    by ``kafka-configs`` (``kafka.admin.ConfigCommand --bootstrap-server``: the Java AdminClient's
    AlterClientQuotas) on the same ``clients`` entities as kafkalog's; ``bootstrap`` once entered."""

    def __init__(self, data_dir: Path, rate: int) -> None:
        self.data_dir = data_dir
        self.rate = rate
        self.bootstrap = ""
        self._zookeeper: Any = None
        self._broker: Any = None

    def __enter__(self) -> _KafkaReference:
        from bench.tls_bench import KAFKA_JVM_OPTIONS
        from broker.cluster.zookeeper_server import ZooKeeperServer
        from tests.compat.kafka_broker import KafkaBroker
        from tests.compat.peers import KAFKA_39

        try:
            self._zookeeper = ZooKeeperServer(self.data_dir / "zookeeper").start()
            connect = f"{self._zookeeper.connect_string}/kafka39-quota"
            self._broker = KafkaBroker(
                KAFKA_39, self.data_dir / "kafka", zookeeper_connect=connect, jvm_options=KAFKA_JVM_OPTIONS
            ).start()
            self.bootstrap = self._broker.bootstrap_servers
            for client_id, key in (("throttled-producer", "producer"), ("throttled-consumer", "consumer")):
                self._broker.run_class(
                    "kafka.admin.ConfigCommand", "--bootstrap-server", self.bootstrap, "--alter",
                    "--entity-type", "clients", "--entity-name", client_id,
                    "--add-config", f"{key}_byte_rate={self.rate}",
                )  # fmt: skip
            described = self._broker.run_class(
                "kafka.admin.ConfigCommand", "--bootstrap-server", self.bootstrap, "--describe",
                "--entity-type", "clients",
            ).stdout  # fmt: skip
            for key in ("producer_byte_rate", "consumer_byte_rate"):
                if f"{key}={float(self.rate)}" not in described and f"{key}={self.rate}" not in described:
                    raise RuntimeError(f"Kafka's quotas after kafka-configs lack {key}={self.rate}: {described!r}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._broker is not None:
            self._broker.stop()
        if self._zookeeper is not None:
            self._zookeeper.stop()


def _run(system: str, bootstrap: str, args: argparse.Namespace) -> dict:
    """Both phases against one broker: ``{"produce": ..., "consume": ..., "load_avg": ...}``."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = {"throttled": "quota-throttled", "free": "quota-free", "source": "quota-source"}
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics.values()]).values():
        future.result(30)
    if args.warm_up_seconds > 0:  # a JVM's JIT (Kafka) would otherwise still be compiling in the first baseline
        print(f"{system}: warm-up, {args.warm_up_seconds:g} s of the unthrottled producer (not recorded)", flush=True)
        _latencies(bootstrap, topics["free"], args.warm_up_seconds)
    load = {"before": os.getloadavg()}
    print(f"{system}: produce phase", flush=True)
    produce = _phase(
        bootstrap, topics["free"], args.seconds, args.baseline_seconds, _throttled_producer,
        (bootstrap, topics["throttled"]),
    )  # fmt: skip
    out = produce.pop("outcome")
    produce["throttled_client"] = _rate_summary(
        out["start"], [(t, VALUE_BYTES) for t in out["acked"]], args.seconds, args.rate
    )
    produce["throttled_client"]["kafka_python_metrics"] = out["metrics"]
    load["after_produce"] = os.getloadavg()
    print(f"{system}: {_one_line(produce)}", flush=True)
    loader = Producer({"bootstrap.servers": bootstrap, "client.id": "loader", "linger.ms": 20})
    value = os.urandom(VALUE_BYTES)
    confluent_produce_all(loader, topics["source"], ((value, None, 0) for _ in range(args.preload_mib * 1024)))
    print(f"{system}: consume phase", flush=True)
    consume = _phase(
        bootstrap, topics["free"], args.seconds, args.baseline_seconds, _throttled_consumer,
        (bootstrap, topics["source"]),
    )  # fmt: skip
    out = consume.pop("outcome")
    consume["throttled_client"] = _rate_summary(out["start"], out["received"], args.seconds, args.rate)
    consume["throttled_client"]["kafka_python_metrics"] = out["metrics"]
    load["after_consume"] = os.getloadavg()
    print(f"{system}: {_one_line(consume)}", flush=True)
    return {"produce": produce, "consume": consume, "load_avg": load}


def _one_line(phase: dict) -> str:
    lat = phase["free_producer_latency"]
    return (
        f"rate {phase['throttled_client']['ratio_to_bound']}x the quota, free producer p99 "
        f"{lat['unloaded']['p99_ms']} -> {lat['loaded']['p99_ms']} ms ({phase['p99_loaded_over_unloaded']}x)"
    )


def _checks(runs: dict) -> dict:
    """Per system and phase: rate within 10 % of the quota, p99 within 2x of unloaded; kafkalog's p99 growth
    also against the reference's of the same run (``p99_growth_vs_reference``: kafkalog's / Kafka's)."""
    checks: dict = {}
    for system, run in runs.items():
        checks[system] = {
            phase: {
                "rate_within_10pct": run[phase]["throttled_client"]["ratio_to_bound"] <= 1.10,
                "p99_within_2x": run[phase]["p99_loaded_over_unloaded"] <= 2.0,
            }
            for phase in QUOTA_PHASES
        }
    if "kafka" in runs:
        for phase in QUOTA_PHASES:
            ours, theirs = (runs[s][phase]["p99_loaded_over_unloaded"] for s in ("kafkalog", "kafka"))
            checks["kafkalog"][phase]["p99_growth_vs_reference"] = round(ours / theirs, 3)
            checks["kafkalog"][phase]["p99_growth_within_reference"] = ours <= theirs
    return checks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="shorter runs, for a smoke test")
    parser.add_argument("--rate", type=int, default=MIB, help="the quota in bytes/s (default 1 MiB/s)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the throttled clients run")
    parser.add_argument("--baseline-seconds", type=float, default=10.0, help="unloaded latency measurement")
    parser.add_argument("--preload-mib", type=int, default=48, help="MiB in the consumed topic")
    parser.add_argument(
        "--warm-up-seconds", type=float, default=10.0, help="unthrottled producer before anything is measured"
    )
    parser.add_argument(
        "--reference", choices=("kafka", "none"), default=None,
        help="the same run against Apache Kafka 3.9.1 (default: kafka when `make peers` fetched its jars)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.baseline_seconds, args.preload_mib, args.warm_up_seconds = 6.0, 3.0, 16, 2.0
    reference = _reference_plan(args.reference)
    runs: dict = {}
    with tempfile.TemporaryDirectory(prefix="kafkalog-quota-bench-") as data_dir:
        with _KafkalogBroker(str(Path(data_dir) / "kafkalog"), args.rate) as kafkalog:
            runs["kafkalog"] = _run("kafkalog", kafkalog.bootstrap, args)
        if reference["requested"]:
            print("kafka: starting Apache Kafka 3.9.1 (ZooKeeper mode)", flush=True)
            try:
                with _KafkaReference(Path(data_dir), args.rate) as kafka:
                    runs["kafka"] = _run("kafka", kafka.bootstrap, args)
                reference["ran"] = True
            except Exception as exc:
                reference["reason"] = f"Apache Kafka's run failed: {type(exc).__name__}: {str(exc)[-2000:]}"
        if not reference["ran"]:
            print(f"NO REFERENCE: {reference['reason']}", file=sys.stderr, flush=True)
    result = {
        "settings": {
            "quota_bytes_per_s": args.rate,
            "seconds": args.seconds,
            "baseline_seconds": args.baseline_seconds,
            "warm_up_seconds": args.warm_up_seconds,
            "value_bytes": VALUE_BYTES,
            "preload_mib": args.preload_mib,
            "latency_rate_per_s": LATENCY_RATE_PER_S,
            "quota_windows": "11 x 1 s",
            "quick": args.quick,
        },
        "reference": reference,
        "results": runs,
        "checks": _checks(runs),
        "machine": machine_info(["kafka-python", "confluent-kafka"]),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "quota.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("quota", result, RESULTS / "quota.png")
    print(json.dumps({"reference": reference, "checks": result["checks"]}, indent=2))
    print(f"wrote {path}")


def _reference_plan(choice: str | None) -> dict:
    """The ``reference`` of the JSON before the run: Apache Kafka 3.9.1 with Kafka's JVM flags."""
    from bench.tls_bench import KAFKA_JVM_OPTIONS

    return reference_plan(
        choice,
        "KAFKA_39",
        kafka_jvm_options=KAFKA_JVM_OPTIONS,
        quotas_set_with="kafka-configs --bootstrap-server --entity-type clients (Java AdminClient)",
    )


if __name__ == "__main__":
    main()
