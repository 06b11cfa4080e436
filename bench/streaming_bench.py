"""Spark Structured Streaming with ``format("kafkalog")``: micro-batch end-to-end latency, and streaming
throughput as a share of the batch read rate.

Against an ``EmbeddedCluster`` broker process on this machine, Spark local[2]:

- **latency**: confluent-kafka's producer sends ``--rate`` records/s (100 B values starting with the
  produce time in ns since the epoch) to a 2-partition input topic for a warm-up of ``WARMUP_S`` seconds
  plus ``--seconds``; a query ``readStream.format("kafkalog")`` -> ``writeStream.format("kafkalog")``
  (processing-time trigger ``--trigger-ms``) copies key and value to a 2-partition output topic, where a
  confluent-kafka consumer (``fetch.wait.max.ms`` 5) notes when each record arrives. Latency per record
  produced after the warm-up: arrival time minus produce time (p50/p90/p99/max); also "sink write":
  the output record's CreateTime (set by the sink's producer) minus the produce time. Per-batch durations
  come from Spark's ``StreamingQueryProgress``.
- **throughput**: one backlog (``--records`` records of 100 B in 2 partitions) read to Spark's ``noop``
  sink by a batch ``spark.read.format("kafkalog")`` and by ``Trigger.AvailableNow`` streaming queries (no
  limit: one micro-batch; and ``maxOffsetsPerTrigger`` = records / 10: ten micro-batches); each after a
  warm-up run, best of ``--repeats`` (runs alternate), rows/s and the streaming/batch ratios. A
  streaming run is timed from ``start()`` to termination, so query start-up (the stream reader's process,
  the checkpoint) counts.

Writes ``bench/results/streaming.json`` and ``streaming.png``. Run:
``python bench/streaming_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.datasource_bench import fill_topic  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PARTITIONS = 2
VALUE_SIZE = 100
WARMUP_S = 5.0
TICK_S = 0.01
"""The producer sends ``rate * TICK_S`` records every ``TICK_S`` seconds."""


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, int(round(q / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[rank]


def summary_ms(latencies_s: list[float]) -> dict:
    values = sorted(latencies_s)
    return {
        "count": len(values),
        "p50_ms": round(percentile(values, 50) * 1000, 1),
        "p90_ms": round(percentile(values, 90) * 1000, 1),
        "p99_ms": round(percentile(values, 99) * 1000, 1),
        "max_ms": round(values[-1] * 1000, 1) if values else None,
        "mean_ms": round(sum(values) / len(values) * 1000, 1) if values else None,
    }


class RateProducer(threading.Thread):
    """Sends ``rate`` records/s to ``topic`` until ``stop()``; each value starts with ``time.time_ns()``
    and a space, padded to ``VALUE_SIZE`` bytes; keys ``<sequence number>``."""

    def __init__(self, bootstrap: str, topic: str, rate: int) -> None:
        super().__init__(name="rate-producer", daemon=True)
        import confluent_kafka

        self.producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 2, "acks": "all", "enable.idempotence": False}
        )
        self.topic = topic
        self.per_tick = max(1, round(rate * TICK_S))
        self.sent = 0
        self.behind_ticks = 0
        self._halt = threading.Event()

    def run(self) -> None:
        next_tick = time.monotonic()
        while not self._halt.is_set():
            for _ in range(self.per_tick):
                stamp = b"%d " % time.time_ns()
                self.producer.produce(
                    self.topic, stamp + b"x" * (VALUE_SIZE - len(stamp)), b"%d" % self.sent, partition=self.sent % 2
                )
                self.sent += 1
            self.producer.poll(0)
            next_tick += TICK_S
            pause = next_tick - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            else:
                self.behind_ticks += 1
        self.producer.flush(30)

    def stop(self) -> None:
        self._halt.set()
        self.join(60)


class ArrivalConsumer(threading.Thread):
    """Consumes ``topic`` from offset 0 and keeps ``(produce_ns, create_ms, arrival_ns)`` per record."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(name="arrival-consumer", daemon=True)
        import confluent_kafka

        self.consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"streaming-bench-{time.time_ns()}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 5,
                "fetch.min.bytes": 1,
            }
        )
        self.consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        self.arrivals: list[tuple[int, int, int]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            messages = self.consumer.consume(10_000, timeout=0.05)
            now = time.time_ns()
            for message in messages:
                if message.error() is None:
                    produced = int(message.value().split(b" ", 1)[0])
                    self.arrivals.append((produced, message.timestamp()[1], now))
        self.consumer.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(30)


def measure_latency(spark, bootstrap: str, admin, rate: int, seconds: float, trigger_ms: int) -> dict:
    source, target = "streaming-latency-in", "streaming-latency-out"
    admin.create_topics([NewTopic(source, PARTITIONS, 1), NewTopic(target, PARTITIONS, 1)])
    checkpoint = tempfile.mkdtemp(prefix="streaming-bench-")
    query = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .load()
        .selectExpr("key", "value")
        .writeStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", target)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=f"{trigger_ms} milliseconds")
        .start()
    )
    progress: dict[int, dict] = {}
    consumer = ArrivalConsumer(bootstrap, target)
    producer = RateProducer(bootstrap, source, rate)
    try:
        deadline = time.monotonic() + 120
        while query.lastProgress is None:  # the first (empty) batch: initial offsets are resolved
            if time.monotonic() > deadline or query.exception() is not None:
                raise SystemExit(f"the streaming query did not start: {query.exception()}")
            time.sleep(0.1)
        consumer.start()
        producer.start()
        started_ns = time.time_ns()
        measured_from_ns = started_ns + int(WARMUP_S * 1e9)
        end = time.monotonic() + WARMUP_S + seconds
        while time.monotonic() < end:
            for p in query.recentProgress:
                progress[p["batchId"]] = p
            time.sleep(1)
        producer.stop()
        measured_until_ns = time.time_ns()
        expected = producer.sent
        deadline = time.monotonic() + 60
        while len(consumer.arrivals) < expected and time.monotonic() < deadline:
            time.sleep(0.2)
        for p in query.recentProgress:
            progress[p["batchId"]] = p
        if query.exception() is not None:
            raise SystemExit(f"the streaming query failed: {query.exception()}")
    finally:
        query.stop()
        consumer.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
    arrivals = consumer.arrivals
    if len(arrivals) < expected:
        raise SystemExit(f"only {len(arrivals)} of {expected} records reached {target}")
    measured = [a for a in arrivals if measured_from_ns <= a[0] <= measured_until_ns]
    end_to_end = [(arrived - produced) / 1e9 for produced, _, arrived in measured]
    sink_write = [(create_ms * 1_000_000 - produced) / 1e9 for produced, create_ms, _ in measured]
    batches = [p for _, p in sorted(progress.items()) if p["numInputRows"] and p["timestamp"]]
    durations = {}
    for key in (
        "triggerExecution",
        "latestOffset",
        "queryPlanning",
        "getBatch",
        "addBatch",
        "walCommit",
        "commitOffsets",
    ):
        values = sorted(p["durationMs"].get(key, 0) for p in batches)
        if values:
            durations[key] = {"p50_ms": percentile(values, 50), "p90_ms": percentile(values, 90), "max_ms": values[-1]}
    return {
        "rate_records_per_s": rate,
        "seconds_measured": seconds,
        "warmup_s": WARMUP_S,
        "trigger_processing_time_ms": trigger_ms,
        "records_sent": expected,
        "records_arrived": len(arrivals),
        "producer_ticks_behind": producer.behind_ticks,
        "end_to_end": summary_ms(end_to_end),
        "produce_to_sink_write": summary_ms(sink_write),
        "micro_batches": len(batches),
        "rows_per_batch_p50": percentile(sorted(p["numInputRows"] for p in batches), 50) if batches else 0,
        "batch_duration_ms": durations,
        "latencies_ms_sample": [round(v * 1000, 1) for v in end_to_end[:: max(1, len(end_to_end) // 5000)]],
    }


def _timed_batch(spark, bootstrap: str, topic: str) -> float:
    df = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()
    started = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - started


def _timed_stream(spark, bootstrap: str, topic: str, records: int, max_offsets: int | None) -> tuple[float, int, int]:
    """Seconds from ``start()`` to termination of an AvailableNow query over the whole topic, its batches with
    records, and the milliseconds Spark's progress reports for all its batches (``triggerExecution``)."""
    reader = (
        spark.readStream.format("kafkalog")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    if max_offsets is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets))
    df = reader.load()
    checkpoint = tempfile.mkdtemp(prefix="streaming-bench-")
    try:
        started = time.perf_counter()
        query = (
            df.writeStream.format("noop").trigger(availableNow=True).option("checkpointLocation", checkpoint).start()
        )
        if not query.awaitTermination(600):
            query.stop()
            raise SystemExit("the AvailableNow query did not finish in 600 s")
        seconds = time.perf_counter() - started
        if query.exception() is not None:
            raise SystemExit(f"the AvailableNow query failed: {query.exception()}")
        rows = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        in_batches_ms = sum(p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress)
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    if sum(rows) != records:
        raise SystemExit(f"the AvailableNow query read {sum(rows)} records, {records} were produced")
    return seconds, len(rows), in_batches_ms


def measure_throughput(spark, bootstrap: str, admin, records: int, repeats: int) -> dict:
    topic = "streaming-backlog"
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    fill_s = fill_topic(bootstrap, topic, records, VALUE_SIZE, "none")
    count = spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
    if count.load().count() != records:
        raise SystemExit(f"{topic}: the batch read does not see {records} records")
    limited = records // 10
    runs = {
        "batch": lambda: (_timed_batch(spark, bootstrap, topic), 1, None),
        "stream": lambda: _timed_stream(spark, bootstrap, topic, records, None),
        "stream_limited": lambda: _timed_stream(spark, bootstrap, topic, records, limited),
    }
    best = {name: (float("inf"), 0, None) for name in runs}
    for n in range(repeats + 1):  # alternate, so that load from other processes hits every reader alike
        for name, run in runs.items():
            measured = run()
            if n:  # the first round warms the JVM and the Python workers up
                best[name] = min(best[name], measured, key=lambda m: m[0])
    result = {"records": records, "value_size": VALUE_SIZE, "fill_seconds": round(fill_s, 2), "repeats": repeats}
    for name, (seconds, batches, in_batches_ms) in best.items():
        result[name] = {
            "seconds": round(seconds, 3),
            "records_per_s": round(records / seconds),
            "micro_batches": batches,
        }
        if in_batches_ms is not None:
            # the rest of the wall time: query start-up and shutdown (stream runner process, checkpoint)
            result[name]["seconds_in_micro_batches"] = round(in_batches_ms / 1000, 3)
            result[name]["records_per_s_in_micro_batches"] = round(records * 1000 / max(in_batches_ms, 1))
    result["stream_limited"]["max_offsets_per_trigger"] = limited
    result["ratio_stream_to_batch"] = round(best["batch"][0] / best["stream"][0], 3)
    result["ratio_stream_limited_to_batch"] = round(best["batch"][0] / best["stream_limited"][0], 3)
    result["ratio_in_micro_batches_to_batch"] = round(best["batch"][0] * 1000 / max(best["stream"][2], 1), 3)
    admin.delete_topics([topic])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 s of latency, 200,000 records, one repeat")
    parser.add_argument("--rate", type=int, default=2000, help="records/s produced for the latency run")
    parser.add_argument("--seconds", type=float, default=None, help="latency run after the warm-up (default 60)")
    parser.add_argument("--trigger-ms", type=int, default=200, help="processing-time trigger of the latency run")
    parser.add_argument("--records", type=int, default=None, help="backlog for throughput (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs of each reader (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    seconds = args.seconds or (10.0 if args.quick else 60.0)
    records = args.records or (200_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 3)

    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.datasource import kafkalog_session

    started = time.perf_counter()
    load_before = os.getloadavg()
    spark = kafkalog_session(
        "local[2]",
        "kafkalog-streaming-bench",
        conf={
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.streaming.numRecentProgressUpdates": "1000",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    with EmbeddedCluster(brokers=1) as cluster, AdminClient(cluster.bootstrap_servers) as admin:
        bootstrap = cluster.bootstrap_servers
        latency = measure_latency(spark, bootstrap, admin, args.rate, seconds, args.trigger_ms)
        e2e, sink = latency["end_to_end"], latency["produce_to_sink_write"]
        print(
            f"latency at {args.rate:,} records/s, trigger {args.trigger_ms} ms, {latency['micro_batches']} batches "
            f"(~{latency['rows_per_batch_p50']} rows each): end-to-end p50 {e2e['p50_ms']} ms, p99 {e2e['p99_ms']} ms, "
            f"max {e2e['max_ms']} ms; produce -> sink write p50 {sink['p50_ms']} ms, p99 {sink['p99_ms']} ms",
            flush=True,
        )
        print(f"  per-batch durations (ms): {json.dumps(latency['batch_duration_ms'])}", flush=True)
        throughput = measure_throughput(spark, bootstrap, admin, records, repeats)
        print(
            f"throughput over {records:,} records: batch {throughput['batch']['records_per_s']:,} rows/s, "
            f"stream {throughput['stream']['records_per_s']:,} rows/s ({throughput['ratio_stream_to_batch']:.0%}), "
            f"stream in {throughput['stream_limited']['micro_batches']} batches "
            f"{throughput['stream_limited']['records_per_s']:,} rows/s ({throughput['ratio_stream_limited_to_batch']:.0%}); "
            f"within the single micro-batch {throughput['stream']['records_per_s_in_micro_batches']:,} rows/s "
            f"({throughput['ratio_in_micro_batches_to_batch']:.0%}, the rest is query start-up and shutdown)",
            flush=True,
        )
    spark.stop()
    result = {
        "benchmark": "streaming: micro-batch end-to-end latency of readStream -> writeStream with format('kafkalog'), "
        "and AvailableNow streaming throughput as a share of the batch read rate",
        "method": {
            "spark": "local[2], broker: one EmbeddedCluster broker process on the same machine",
            "latency": "confluent-kafka producer at a fixed rate (values start with the produce time in ns), "
            "readStream(kafkalog) -> writeStream(kafkalog) with a processing-time trigger, confluent-kafka "
            "consumer of the output topic (fetch.wait.max.ms 5) notes arrival times; records produced during "
            "the warm-up are not counted; produce_to_sink_write uses the output record's CreateTime",
            "throughput": "same backlog to the noop sink: batch read vs AvailableNow queries (timed from start() to "
            "termination, checkpoint included), one warm-up round, then best of repeats, runs alternating",
            "quick": args.quick,
        },
        "machine": machine_info(("pyspark", "pyarrow", "confluent-kafka")),
        "load_average_1_5_15": {
            "start": [round(v, 2) for v in load_before],
            "end": [round(v, 2) for v in os.getloadavg()],
        },
        "latency": latency,
        "throughput": throughput,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "streaming.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("streaming", result, args.out / "streaming.png")
    print(f"wrote {args.out / 'streaming.json'} and streaming.png in {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
