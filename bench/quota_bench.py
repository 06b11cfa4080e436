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

Holding the throttled clients is the broker's work: it answers with ``throttle_time_ms`` and then mutes the
connection (KIP-219); the kafka-python clients' own throttle metrics are recorded to show the field arrived.
The machine's load averages are recorded (other work on a shared machine shows there). Writes
``bench/results/quota.json`` and ``quota.png``. Run: ``python -m bench.quota_bench [--quick]``.
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
from bench.stats import confluent_produce_all, percentile  # noqa: E402

RESULTS = ROOT / "bench" / "results"
VALUE_BYTES = 1024
MIB = 1024 * 1024
LATENCY_RATE_PER_S = 100
_OUTSTANDING = 8 * MIB // VALUE_BYTES  # the throttled producer's buffer: values sent but not acknowledged


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="shorter runs, for a smoke test")
    parser.add_argument("--rate", type=int, default=MIB, help="the quota in bytes/s (default 1 MiB/s)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the throttled clients run")
    parser.add_argument("--baseline-seconds", type=float, default=10.0, help="unloaded latency measurement")
    parser.add_argument("--preload-mib", type=int, default=48, help="MiB in the consumed topic")
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.baseline_seconds, args.preload_mib = 6.0, 3.0, 16
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    with tempfile.TemporaryDirectory(prefix="kafkalog-quota-bench-") as log_dir:
        server = ctx.Process(target=_serve, args=(child, log_dir, args.rate))
        server.start()
        try:
            if not parent.poll(120):
                raise RuntimeError("the broker did not start within 120 s")
            bootstrap = parent.recv()
            admin = AdminClient({"bootstrap.servers": bootstrap})
            topics = {"throttled": "quota-throttled", "free": "quota-free", "source": "quota-source"}
            for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics.values()]).values():
                future.result(30)
            load = {"before": os.getloadavg()}
            print("produce phase", flush=True)
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
            print(json.dumps(produce["throttled_client"]["bytes_per_s"]), flush=True)
            loader = Producer({"bootstrap.servers": bootstrap, "client.id": "loader", "linger.ms": 20})
            value = os.urandom(VALUE_BYTES)
            confluent_produce_all(loader, topics["source"], ((value, None, 0) for _ in range(args.preload_mib * 1024)))
            print("consume phase", flush=True)
            consume = _phase(
                bootstrap, topics["free"], args.seconds, args.baseline_seconds, _throttled_consumer,
                (bootstrap, topics["source"]),
            )  # fmt: skip
            out = consume.pop("outcome")
            consume["throttled_client"] = _rate_summary(out["start"], out["received"], args.seconds, args.rate)
            consume["throttled_client"]["kafka_python_metrics"] = out["metrics"]
            load["after_consume"] = os.getloadavg()
        finally:
            parent.send("stop")
            server.join(60)
    result = {
        "settings": {
            "quota_bytes_per_s": args.rate,
            "seconds": args.seconds,
            "baseline_seconds": args.baseline_seconds,
            "value_bytes": VALUE_BYTES,
            "preload_mib": args.preload_mib,
            "latency_rate_per_s": LATENCY_RATE_PER_S,
            "quota_windows": "11 x 1 s",
            "quick": args.quick,
        },
        "results": {"produce": produce, "consume": consume},
        "checks": {
            phase: {
                "rate_within_10pct": r["throttled_client"]["ratio_to_bound"] <= 1.10,
                "p99_within_2x": r["p99_loaded_over_unloaded"] <= 2.0,
            }
            for phase, r in (("produce", produce), ("consume", consume))
        },
        "load_avg": load,
        "machine": machine_info(["kafka-python", "confluent-kafka"]),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "quota.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    plots.save("quota", result, RESULTS / "quota.png")
    print(json.dumps({"checks": result["checks"]}, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
