"""Replication figures (issue 13) on three broker processes: throughput cost, failover time, end-to-end latency.

One ``EmbeddedCluster`` (a real ZooKeeper server it starts itself plus 3 broker processes, broker defaults
except ``zookeeper.session.timeout.ms``, recorded in the JSON). Scenarios:

* throughput: the same producer sends 100 B values (uncompressed, idempotence off, ``linger.ms=5``) to an
  RF 1 topic with acks=1 and to an RF 3 topic (``min.insync.replicas=2``) with acks=all, one partition
  each, alternating over ``--rounds`` rounds in the same run; records/s of each run, the median per mode,
  and the ratio acks=all RF 3 / acks=1 RF 1. Producers: the project's ``spark_kafkalog.client.Producer``
  and confluent-kafka (librdkafka). Kafka's published ratio for this pair is about 0.51 (821,557 vs
  421,823 records/s, Kreps 2014); goal >= 0.5.
* failover: an idempotent acks=all producer (the project's, client defaults, ``linger.ms=0``) sends one
  record every 2 ms to one partition of an RF 3 topic; the partition's leader (one that is not the
  controller when there is such a partition) is SIGKILLed (a crash: its ZooKeeper session must expire
  before the controller elects a new leader) or stopped with SIGTERM (a controlled shutdown: the
  controller moves leadership first). Per repetition: ``next_ack_s``, from the signal to the
  acknowledgement of the first record sent after the old leader's process is gone (only a new leader can
  acknowledge that one), and ``unavailable_s``, the longest stretch without any acknowledgement from the
  signal until then. The same for SIGKILL of an ISR follower (``sigkill_follower``: acks=all waits for
  every ISR member, so a dead follower stalls writes until it leaves the ISR). The broker is restarted
  and the ISR is full again before the next repetition; median and max are reported. Goals: SIGKILL
  (leader or follower) within the session timeout plus 1 s, controlled shutdown under 1 s unavailable.
* end-to-end latency (measured first, on a quiet cluster): records sent at ``--latency-rate`` records/s
  (acks=all, ``linger.ms=0``) carry their send time; a consumer (manual assignment, long polls) in the
  same process takes the difference when it sees them (a record is visible once the high watermark
  passes it, so replication is included); p50/p99, with RF 1 acks=1 in the same run as the baseline.

The machine's 1-, 5- and 15-minute load averages are recorded between the phases (other work on a shared
machine shows there). Writes ``bench/results/replication.json`` and ``replication.png``. Run:
``python -m bench.replication_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import percentile, wait_for  # noqa: E402
from broker.embedded_cluster import EmbeddedCluster  # noqa: E402
from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SESSION_MS = 6000
VALUE_BYTES = 100
SEND_INTERVAL_S = 0.002
KAFKA_PUBLISHED_RATIO = 421_823 / 821_557  # acks=all RF 3 vs acks=1 RF 1, one producer thread, 100 B values


def _value(size: int = VALUE_BYTES) -> bytes:
    return (os.urandom(size // 4).hex().encode() * 2)[:size]


# -- throughput ---------------------------------------------------------------------------------
def produce_ours(bootstrap: str, topic: str, count: int, acks: str) -> float:
    """Records/s of the project's producer sending ``count`` values to partition 0 (after a warm-up send)."""
    value = _value()
    failed: list[BaseException] = []

    def on_delivery(_meta, err) -> None:
        if err is not None:
            failed.append(err)

    with Producer(
        bootstrap, acks=acks, linger_ms=5, batch_size=65536, enable_idempotence=False, compression_type="none"
    ) as p:
        p.send(topic, value, partition=0).result(30)
        start = time.perf_counter()
        for _ in range(count):
            p.send(topic, value, partition=0, on_delivery=on_delivery)
        p.flush(120)
        elapsed = time.perf_counter() - start
    if failed:
        raise RuntimeError(f"{len(failed)} deliveries failed: {failed[0]}")
    return count / elapsed


def produce_confluent(bootstrap: str, topic: str, count: int, acks: str) -> float:
    """Records/s of a librdkafka producer sending ``count`` values to partition 0 (after a warm-up send)."""
    from confluent_kafka import Producer as CProducer

    p = CProducer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "enable.idempotence": False,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    value = _value()
    failed = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failed.append(err)

    p.produce(topic, value, partition=0, on_delivery=on_delivery)
    if p.flush(30):
        raise RuntimeError("the warm-up record was not delivered")
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                p.produce(topic, value, partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10_000 == 0:
            p.poll(0)
    left = p.flush(120)
    elapsed = time.perf_counter() - start
    if failed or left:
        raise RuntimeError(f"{len(failed)} deliveries failed ({failed[:1]}), {left} not delivered")
    return count / elapsed


def throughput(bootstrap: str, counts: dict[str, int], rounds: int) -> dict:
    """acks=1 to ``rf1`` and acks=all to ``rf3`` alternately, ``rounds`` times, for each producer."""
    producers = {"spark_kafkalog": produce_ours, "confluent_kafka": produce_confluent}
    modes = {"acks1_rf1": ("bench-rf1", "1"), "acksall_rf3": ("bench-rf3", "all")}
    out: dict = {}
    for name, fn in producers.items():
        runs: dict[str, list[float]] = {m: [] for m in modes}
        for r in range(rounds):
            for mode, (topic, acks) in modes.items():
                rate = fn(bootstrap, topic, counts[name], acks)
                runs[mode].append(round(rate))
                print(f"throughput {name} {mode} round {r + 1}: {rate:,.0f} records/s", flush=True)
        medians = {m: statistics.median(v) for m, v in runs.items()}
        out[name] = {
            "records_per_run": counts[name],
            "records_per_s": runs,
            "median_records_per_s": medians,
            "ratio": round(medians["acksall_rf3"] / medians["acks1_rf1"], 3),
        }
        print(f"throughput {name}: acks=all RF 3 / acks=1 RF 1 = {out[name]['ratio']:.2f}", flush=True)
    return out


# -- failover -----------------------------------------------------------------------------------
class SteadyProducer(threading.Thread):
    """Sends a record to ``partition`` every ``SEND_INTERVAL_S`` (acks=all, idempotent) and keeps
    ``(send time, ack time or None, error)`` per record, times from ``time.monotonic()``."""

    def __init__(self, bootstrap: str, topic: str, partition: int) -> None:
        super().__init__(daemon=True)
        self.producer = Producer(bootstrap, acks="all", linger_ms=0)
        self.topic = topic
        self.partition = partition
        self.records: list[list] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def run(self) -> None:
        value = _value()
        next_send = time.monotonic()
        while not self.stopping.is_set():
            entry = [time.monotonic(), None, None]
            with self.lock:
                self.records.append(entry)

            def on_delivery(_meta, err, entry=entry) -> None:
                entry[1], entry[2] = time.monotonic(), err

            self.producer.send(self.topic, value, partition=self.partition, on_delivery=on_delivery)
            next_send += SEND_INTERVAL_S
            time.sleep(max(0.0, next_send - time.monotonic()))

    def acked(self) -> int:
        with self.lock:
            return sum(1 for e in self.records if e[1] is not None and e[2] is None)

    def close(self) -> None:
        self.stopping.set()
        self.join(10)
        self.producer.close(30)

    def first_ack_of_sent_after(self, t: float) -> float | None:
        with self.lock:
            acks = [e[1] for e in self.records if e[0] > t and e[1] is not None and e[2] is None]
        return min(acks) if acks else None

    def longest_gap(self, start: float, end: float) -> float:
        """Longest stretch in [start, end] without an acknowledgement."""
        with self.lock:
            acks = sorted(e[1] for e in self.records if e[1] is not None and e[2] is None and start < e[1] <= end)
        points = [start, *acks, end]
        return max(b - a for a, b in zip(points, points[1:]))

    def errors(self) -> int:
        with self.lock:
            return sum(1 for e in self.records if e[2] is not None)


def _partition_state(admin: AdminClient, topic: str):
    return {p.partition: p for p in admin.describe_topics([topic])[topic].partitions}


def _fully_replicated(bootstrap: str, topic: str, brokers: int) -> bool:
    with AdminClient(bootstrap) as admin:
        parts = _partition_state(admin, topic)
    return all(p.leader >= 0 and len(p.isr) == brokers for p in parts.values())


def failover(cluster: EmbeddedCluster, topic: str, how: str, repetitions: int) -> dict:
    """``how`` is ``sigkill`` (the leader), ``controlled`` (shutdown of the leader) or ``sigkill_follower``
    (an ISR follower, not the controller where possible); see the module docstring for the figures."""
    brokers = len(cluster.broker_ids)
    reps = []
    for rep in range(repetitions):
        bs = cluster.bootstrap_servers
        wait_for(lambda: _fully_replicated(bs, topic, brokers), 120, f"{topic} fully replicated")
        with AdminClient(bs) as admin:
            controller = admin.describe_cluster()["controller_id"]
            parts = _partition_state(admin, topic)
        candidates = [p for p in parts.values() if p.leader != controller] or list(parts.values())
        part = candidates[rep % len(candidates)]
        victim = part.leader
        if how == "sigkill_follower":
            followers = [b for b in part.isr if b != part.leader]
            victim = next((b for b in followers if b != controller), followers[0])
        producer = SteadyProducer(bs, topic, part.partition)
        producer.start()
        try:
            wait_for(lambda: producer.acked() >= 200, 60, "200 acknowledged records before the signal")
            t0 = time.monotonic()
            if how.startswith("sigkill"):
                cluster.kill_broker(victim)
            else:
                cluster.stop_broker(victim, timeout_s=60)
            gone = time.monotonic()
            deadline = SESSION_MS / 1000 + 60
            t_next = wait_for(
                lambda: producer.first_ack_of_sent_after(gone), deadline, "an acknowledgement after failover"
            )
            time.sleep(0.2)
            result = {
                "partition": part.partition,
                "stopped_broker": victim,
                "stopped_broker_role": "leader" if victim == part.leader else "follower",
                "was_controller": victim == controller,
                "stop_s": round(gone - t0, 3),
                "next_ack_s": round(t_next - t0, 3),
                "unavailable_s": round(producer.longest_gap(t0, t_next), 3),
            }
        finally:
            producer.close()
        result["delivery_errors"] = producer.errors()
        reps.append(result)
        print(f"failover {how} {rep + 1}: {result}", flush=True)
        cluster.start_broker(victim)
    next_ack = [r["next_ack_s"] for r in reps]
    unavailable = [r["unavailable_s"] for r in reps]
    summary = {
        "repetitions": reps,
        "next_ack_s": {"median": statistics.median(next_ack), "max": max(next_ack)},
        "unavailable_s": {"median": statistics.median(unavailable), "max": max(unavailable)},
    }
    if how.startswith("sigkill"):
        summary["goal_s"] = SESSION_MS / 1000 + 1
        summary["within_goal"] = max(next_ack) <= summary["goal_s"]
    else:
        summary["goal_s"] = 1.0
        summary["within_goal"] = max(unavailable) < summary["goal_s"]
    return summary


# -- end-to-end latency -------------------------------------------------------------------------
_STAMP = struct.Struct(">q")


def end_to_end(bootstrap: str, topic: str, acks: str, rate: int, seconds: float) -> dict:
    """Send time (``perf_counter_ns``, first 8 bytes of the value) to the consumer seeing the record."""
    tp = TopicPartition(topic, 0)
    consumer = Consumer(bootstrap, fetch_max_wait_ms=500, enable_auto_commit=False)
    consumer.assign([tp])
    consumer.seek_to_end([tp])
    consumer.poll(0)
    pad = _value(VALUE_BYTES - _STAMP.size)
    total = int(rate * seconds)
    latencies: list[float] = []
    failed: list[BaseException] = []

    def send_all() -> None:
        with Producer(bootstrap, acks=acks, linger_ms=0) as p:
            start = time.perf_counter()
            for n in range(total):
                while time.perf_counter() < start + n / rate:
                    time.sleep(0.0002)
                p.send(
                    topic,
                    _STAMP.pack(time.perf_counter_ns()) + pad,
                    partition=0,
                    on_delivery=lambda _m, e: e is not None and failed.append(e),
                )

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    deadline = time.monotonic() + seconds + 60
    try:
        while len(latencies) < total and time.monotonic() < deadline:
            for rec in consumer.poll(100):
                latencies.append((time.perf_counter_ns() - _STAMP.unpack_from(rec.value)[0]) / 1e6)
    finally:
        sender.join(60)
        consumer.close()
    if failed:
        raise RuntimeError(f"{len(failed)} deliveries failed: {failed[0]}")
    latencies.sort()
    return {
        "acks": acks,
        "rate": rate,
        "sent": total,
        "seen": len(latencies),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "max_ms": round(latencies[-1], 2),
    }


# -- main ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and one repetition (a smoke run)")
    parser.add_argument("--rounds", type=int, default=None, help="throughput rounds per mode")
    parser.add_argument("--repetitions", type=int, default=None, help="failovers of each kind")
    parser.add_argument("--latency-rate", type=int, default=1000, help="records/s of the latency run")
    parser.add_argument("--out", default=str(RESULTS / "replication.json"))
    args = parser.parse_args(argv)
    quick = args.quick
    rounds = args.rounds or (1 if quick else 3)
    repetitions = args.repetitions or (1 if quick else 5)
    counts = {"spark_kafkalog": 5_000 if quick else 200_000, "confluent_kafka": 20_000 if quick else 1_000_000}
    latency_s = 2.0 if quick else 10.0
    data_dir = tempfile.mkdtemp(prefix="kafkalog-replication-bench-")
    cluster = EmbeddedCluster(3, data_dir=data_dir, broker_config={"zookeeper.session.timeout.ms": SESSION_MS})
    with cluster:
        bs = cluster.bootstrap_servers
        rf3 = {"min.insync.replicas": "2"}
        with AdminClient(bs) as admin:
            admin.create_topics(
                [
                    NewTopic("bench-rf1", 1, 1),
                    NewTopic("bench-rf3", 1, 3, rf3),
                    NewTopic("bench-failover", 3, 3, rf3),
                    NewTopic("bench-latency-rf1", 1, 1),
                    NewTopic("bench-latency-rf3", 1, 3, rf3),
                ]
            )
        for topic in ("bench-rf3", "bench-failover", "bench-latency-rf3"):
            wait_for(lambda t=topic: _fully_replicated(bs, t, 3), 60, f"{topic} fully replicated")
        result = {
            "machine": machine_info(["confluent-kafka"]),
            "quick": quick,
            "cluster": {
                "brokers": 3,
                "zookeeper.session.timeout.ms": SESSION_MS,
                "min.insync.replicas": 2,
                "value_bytes": VALUE_BYTES,
            },
            "load_average": {"start": os.getloadavg()},
        }
        # latency first, on a quiet cluster: after the throughput runs the brokers still flush and follow
        result["latency"] = {
            "acks1_rf1": end_to_end(bs, "bench-latency-rf1", "1", args.latency_rate, latency_s),
            "acksall_rf3": end_to_end(bs, "bench-latency-rf3", "all", args.latency_rate, latency_s),
        }
        print(f"latency: {json.dumps(result['latency'])}", flush=True)
        result["load_average"]["after_latency"] = os.getloadavg()
        result["throughput"] = throughput(bs, counts, rounds)
        result["kafka_published_ratio"] = round(KAFKA_PUBLISHED_RATIO, 3)
        result["ratio_goal"] = 0.5
        result["load_average"]["after_throughput"] = os.getloadavg()
        result["failover"] = {
            "sigkill": failover(cluster, "bench-failover", "sigkill", repetitions),
            "controlled_shutdown": failover(cluster, "bench-failover", "controlled", repetitions),
            "sigkill_follower": failover(cluster, "bench-failover", "sigkill_follower", repetitions),
        }
        result["load_average"]["end"] = os.getloadavg()
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("replication", result, out.with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
