"""Write throughput: Spark ``format("kafkalog")`` writes against the Arrow-writer ceiling, and ``Producer.send_batch``.

- ``spark``: for each value size (100 B, 1 KiB) and codec, a cached DataFrame of ``--records`` rows (key
  ``key-<id>``, JSON-like values of exactly that size around a SHA-256 hex payload, about 2:1 compressible)
  written with ``df.write.format("kafkalog")`` to a 2-partition topic (local[2]: two tasks, each with its
  own producer; codec ``zstd-1`` is zstd with ``compression.zstd.level=1``), against ``ceiling``: the same DataFrame written to a Python ``DataSourceArrowWriter``
  that only counts the rows of its Arrow batches (the most a Python sink can take in on this machine).
  Best of ``--repeats`` runs after a warm-up, the two alternating. Target: kafkalog >= 0.5 of the ceiling.
- ``batch_api``: one Python process sending prebuilt Arrow arrays (100 B values, keyed, 2 partitions)
  with ``Producer.send_batch`` in calls of 100,000 rows, per codec, until every batch is acknowledged
  (target >= 1 M rec/s); next to it per-record ``Producer.send`` and confluent-kafka's ``produce`` on
  the same data (no codec) with the same settings (``PER_RECORD_SETTINGS``), and ``send`` with our
  defaults, best of 3 in turns (target: ``send`` at least confluent-kafka's rate).
- ``cpu_bound`` per Spark case: the CPU the machine has at the target against the ceiling run's CPU plus
  the codec's (``codec_cpu_seconds``); each kafkalog run writes into a new topic, deleted after it.

The broker is an ``EmbeddedCluster`` broker process on the same machine (2 cores shared with Spark and
the producers). Load averages before and after are recorded. Writes ``bench/results/write.json`` and
``write.png``. Run: ``python bench/write_bench.py [--quick] [--repeats N] [--codecs ...] [--sizes ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.datasource_bench import timed_with_cpu  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import confluent_produce_all  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic, Producer  # noqa: E402
from spark_kafkalog.records import columnar  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PARTITIONS = 2
VALUE_SIZES = (100, 1024)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd", "zstd-1")


def codec_settings(label: str) -> dict[str, str]:
    """Producer settings of a codec label: a ``compression.type``, ``zstd-1`` adding ``compression.zstd.level=1``."""
    codec, _, level = label.partition("-")
    return {"compression.type": codec, **({f"compression.{codec}.level": level} if level else {})}


TARGET_SPARK = 0.5
TARGET_BATCH_API = 1_000_000
CALL_ROWS = 100_000


def counting_sink():
    from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

    class CountingWriter(DataSourceArrowWriter):
        def write(self, iterator):
            rows = 0
            for batch in iterator:
                rows += batch.num_rows
            return WriterCommitMessage()

    class CountingSink(DataSource):
        @classmethod
        def name(cls):
            return "kafkalog_count"

        def writer(self, schema, overwrite):
            return CountingWriter()

    return CountingSink


def frame(spark, records: int, value_size: int):
    """key ``key-<id>``; value: ``{"id":<id>,"payload":"<hex>"}`` of exactly ``value_size`` bytes."""
    repeats = value_size // 64 + 1  # enough hex, cut to size
    df = spark.range(records).selectExpr(
        "CAST(CONCAT('key-', id) AS BINARY) AS key",
        f"""CAST(CONCAT(SUBSTRING(CONCAT('{{"id":', id, ',"payload":"', REPEAT(sha2(CAST(id AS STRING), 256), {repeats})),
                1, {value_size - 2}), '"}}') AS BINARY) AS value""",
    )
    return df.cache()


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


class Topics:
    """Bench topics: each run writes into a new one, deleted (its files gone) before the next run, so the
    bench's disk and page cache stay bounded however many cases and repeats it runs."""

    def __init__(self, admin: AdminClient, data_dir: Path) -> None:
        self.admin = admin
        self.data_dir = data_dir
        self._n = 0

    def new(self, prefix: str) -> str:
        self._n += 1
        name = f"{prefix}-{os.getpid()}-{self._n}"
        self.admin.create_topics([NewTopic(name, PARTITIONS, 1, {})])
        return name

    def drop(self, name: str, timeout_s: float = 60.0) -> None:
        self.admin.delete_topics([name])
        deadline = time.monotonic() + timeout_s
        while any(self.data_dir.glob(f"**/{name}-*")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the log files of deleted topic {name} are still there after {timeout_s}s")
            time.sleep(0.1)


def page_cache_write_cpu(directory: Path, megabytes: int = 512) -> float:
    """CPU seconds per GB of writing a new file in ``directory`` (1 MiB ``os.write`` calls): what a log
    append's copy into the page cache costs on this machine. In this VM freed memory goes back to the
    host within about half a second (virtio-balloon free page reporting), so page cache for new data is
    first-touched memory: 0.35-1.6 s per 530 MB measured, against 0.1 s when freed pages are reused at
    once. Every broker writing here pays it: a large part of the broker's CPU for 1 KiB uncompressed rows."""
    chunk = os.urandom(1 << 20)
    path = directory / f"page-cache-probe-{os.getpid()}"
    started = time.process_time()
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
    try:
        for _ in range(megabytes):
            os.write(fd, chunk)
    finally:
        os.close(fd)
    seconds = time.process_time() - started
    path.unlink()
    return round(seconds * 1024 / megabytes, 3)


def figures(records: int, nbytes: int, seconds: float) -> dict:
    return {
        "seconds": round(seconds, 3),
        "records_per_s": round(records / seconds),
        "mb_per_s": round(nbytes / seconds / 1e6, 1),
    }


def spark_cases(spark, topics: Topics, bootstrap: str, records: int, repeats: int, codecs, sizes) -> list[dict]:
    cases = []
    print(f"{'case':>14} | {'kafkalog':>10} {'ceiling':>10} {'ratio':>6}  (rows/s)", flush=True)
    for size in sizes:
        n = records if size <= 100 else records // 2
        df = frame(spark, n, size)
        df.count()
        nbytes = n * size + sum(len(b"key-%d" % i) for i in range(n))
        for codec in codecs:
            settings = {f"kafka.{k}": v for k, v in codec_settings(codec).items()}

            def kafkalog():
                topic = topics.new(f"bench-write-{size}-{codec}")
                try:
                    measured = timed_with_cpu(
                        lambda: (
                            df.write.format("kafkalog")
                            .option("kafka.bootstrap.servers", bootstrap)
                            .option("topic", topic)
                            .options(**settings)
                            .mode("append")
                            .save()
                        )
                    )
                finally:
                    topics.drop(topic)
                return measured

            def ceiling():
                return timed_with_cpu(lambda: df.write.format("kafkalog_count").mode("append").save())

            kafkalog()
            ceiling()  # warm-up
            best: dict[str, tuple[float, dict[str, float]]] = {
                "kafkalog": (float("inf"), {}),
                "ceiling": (float("inf"), {}),
            }
            for _ in range(repeats):
                for name, run in (("kafkalog", kafkalog), ("ceiling", ceiling)):
                    measured = run()
                    if measured[0] < best[name][0]:
                        best[name] = measured
            (kafkalog_s, kafkalog_cpu), (ceiling_s, ceiling_cpu) = best["kafkalog"], best["ceiling"]
            case = {
                "codec": codec,
                "value_size": size,
                "records": n,
                "kafkalog": figures(n, nbytes, kafkalog_s),
                "ceiling": figures(n, nbytes, ceiling_s),
                "ratio_to_ceiling": round(ceiling_s / kafkalog_s, 3),
                "cpu_seconds": {"kafkalog": kafkalog_cpu, "ceiling": ceiling_cpu},
            }
            cases.append(case)
            print(
                f"{codec:>8} {size:>4} B | {case['kafkalog']['records_per_s']:>10,} {case['ceiling']['records_per_s']:>10,} "
                f"{case['ratio_to_ceiling']:>5.0%}",
                flush=True,
            )
        df.unpersist()
    return cases


def arrow_rows(records: int, size: int):
    """The Spark cases' rows (``frame``) as Arrow arrays: key ``key-<id>``, the same JSON-like values."""
    import hashlib

    import pyarrow as pa

    repeats = size // 64 + 1
    keys = [b"key-%d" % i for i in range(records)]
    values = [
        (b'{"id":%d,"payload":"' % i + hashlib.sha256(b"%d" % i).hexdigest().encode() * repeats)[: size - 2] + b'"}'
        for i in range(records)
    ]
    return pa.array(keys, pa.binary()), pa.array(values, pa.binary())


def codec_cpu_seconds(records: int, size: int, codecs, repeats: int = 3) -> dict[str, float]:
    """CPU seconds (best of ``repeats``, one thread) that compressing the Spark case's rows costs: the
    records encoded into 512 KiB batches (the sink's default) with each codec, minus the same encoding
    uncompressed. A lower bound of what any Kafka writer of those rows spends on the codec."""
    import numpy as np

    from spark_kafkalog.records.compression import Compression

    keys, values = arrow_rows(records, size)
    value_column, key_column = columnar.BinaryColumn.of(values), columnar.BinaryColumn.of(keys)
    timestamps = np.full(records, int(time.time() * 1000), np.int64)
    sizes = columnar.record_sizes(value_column, key_column, None)
    runs = columnar.split_rows(np.arange(records, dtype=np.int64), sizes, 512 * 1024)

    def cpu(label: str) -> float:
        settings = codec_settings(label)
        codec = settings["compression.type"]
        compression = Compression.from_name(codec)
        level = settings.get(f"compression.{codec}.level")
        best = float("inf")
        for _ in range(repeats):
            started = time.process_time()
            for run in runs:
                columnar.encode_batch(
                    run,
                    timestamps[run],
                    value_column,
                    key_column,
                    None,
                    compression,
                    level=int(level) if level else None,
                )
            best = min(best, time.process_time() - started)
        return best

    plain = cpu("none")
    return {codec: round(max(cpu(codec) - plain, 0.0), 3) for codec in codecs if codec != "none"} | {"none": 0.0}


def cpu_bound(case: dict, codec_cpu: float) -> dict:
    """Whether the target is within this machine's reach for ``case``: at the target the run may last
    ``ceiling_s / target`` on 2 cores, i.e. use at most ``budget`` CPU seconds; it needs at least what the
    ceiling run used (Spark feeding a Python writer) plus the codec (``codec_cpu_seconds``)."""
    cores = os.cpu_count() or 1
    budget = cores * case["ceiling"]["seconds"] / TARGET_SPARK
    ceiling_cpu = case["cpu_seconds"]["ceiling"]["machine"]
    return {
        "cpu_budget_at_target": round(budget, 3),
        "ceiling_machine_cpu": ceiling_cpu,
        "codec_cpu": codec_cpu,
        "left_for_encoding_sending_and_broker": round(budget - ceiling_cpu - codec_cpu, 3),
        "reachable_on_this_machine": budget - ceiling_cpu - codec_cpu > 0,
    }


# Per-record producers compared with the same settings: librdkafka's batch.size default (1 MB), linger.ms 5,
# acks=all (both clients' default); confluent-kafka's queue may hold every record (it never blocks).
PER_RECORD_SETTINGS = {"linger.ms": 5, "batch.size": 1_000_000, "acks": "all"}


def batch_api_cases(topics: Topics, bootstrap: str, records: int, codecs) -> dict:
    keys, values = arrow_rows(records, 100)
    nbytes = sum(len(b"key-%d" % i) for i in range(records)) + records * 100
    out = {"value_size": 100, "records": records, "rows_per_call": CALL_ROWS, "send_batch": []}
    print(f"batch API, 100 B, {records:,} records in calls of {CALL_ROWS:,} rows", flush=True)
    for codec in codecs:
        topic = topics.new(f"bench-batch-api-{codec}")
        with Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **codec_settings(codec)}) as producer:
            producer.send_batch(topic, values.slice(0, 1000), keys.slice(0, 1000)).result(60)  # metadata, warm-up

            def run():
                results = [
                    producer.send_batch(topic, values.slice(i, CALL_ROWS), keys.slice(i, CALL_ROWS))
                    for i in range(0, records, CALL_ROWS)
                ]
                for result in results:
                    result.result(300)

            seconds = timed(run)
        topics.drop(topic)
        out["send_batch"].append({"codec": codec, **figures(records, nbytes, seconds)})
        print(f"  send_batch {codec:>6}: {out['send_batch'][-1]['records_per_s']:>10,} rec/s", flush=True)

    per_record = min(records, 300_000)
    key_list, value_list = keys.to_pylist()[:per_record], values.to_pylist()[:per_record]
    per_record_bytes = nbytes * per_record // records

    def ours(settings: dict) -> float:
        topic = topics.new("bench-send")
        with Producer({"bootstrap.servers": bootstrap, **settings}) as producer:
            producer.send(topic, b"warm-up").result(60)

            def run_send():
                send = producer.send
                for k, v in zip(key_list, value_list):
                    send(topic, v, k)
                producer.flush()

            seconds = timed(run_send)
        topics.drop(topic)
        return seconds

    def confluent() -> float:
        import confluent_kafka

        topic = topics.new("bench-confluent")
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                **PER_RECORD_SETTINGS,
                "queue.buffering.max.messages": 2_000_000,
                "queue.buffering.max.kbytes": 2_000_000,
            }
        )
        producer.produce(topic, b"warm-up")
        producer.flush(60)

        seconds = timed(
            lambda: confluent_produce_all(producer, topic, ((v, k, None) for k, v in zip(key_list, value_list)))
        )
        topics.drop(topic)
        return seconds

    # best of 3, in turns, so that a burst of load elsewhere hits both clients alike
    best = {"send": float("inf"), "send_default_settings": float("inf"), "confluent_produce": float("inf")}
    for _ in range(3):
        best["send"] = min(best["send"], ours(PER_RECORD_SETTINGS))
        best["confluent_produce"] = min(best["confluent_produce"], confluent())
        best["send_default_settings"] = min(best["send_default_settings"], ours({}))
    for name, seconds in best.items():
        out[name] = figures(per_record, per_record_bytes, seconds)
        print(f"  {name}: {out[name]['records_per_s']:>10,} rec/s", flush=True)
    out["per_record_settings"] = PER_RECORD_SETTINGS
    out["send_to_confluent"] = round(best["confluent_produce"] / best["send"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 rows, codecs none and lz4, one repeat")
    parser.add_argument("--records", type=int, default=None, help="rows per Spark case (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None, help="Spark runs per figure after a warm-up (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--codecs", nargs="+", choices=CODECS, help="codecs to run (default: all)")
    parser.add_argument("--sizes", nargs="+", type=int, choices=VALUE_SIZES, help="value sizes (default: all)")
    args = parser.parse_args()
    records = args.records or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 3)
    codecs = args.codecs or (("none", "lz4") if args.quick else CODECS)
    sizes = args.sizes or VALUE_SIZES

    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.datasource import kafkalog_session

    load_before = os.getloadavg()
    started = time.perf_counter()
    with EmbeddedCluster(brokers=1) as cluster, AdminClient(cluster.bootstrap_servers) as admin:
        bootstrap = cluster.bootstrap_servers
        topics = Topics(admin, cluster.data_dir)
        page_cache = [page_cache_write_cpu(cluster.data_dir)]
        batch_api = batch_api_cases(topics, bootstrap, records, codecs)
        spark = kafkalog_session("local[2]", "kafkalog-write-bench", conf={"spark.ui.enabled": "false"})
        spark.sparkContext.setLogLevel("ERROR")
        spark.dataSource.register(counting_sink())
        cases = spark_cases(spark, topics, bootstrap, records, repeats, codecs, sizes)
        spark.stop()
        page_cache.append(page_cache_write_cpu(cluster.data_dir))
    for size in sizes:
        n = records if size <= 100 else records // 2
        codec_cpu = codec_cpu_seconds(n, size, codecs)
        for case in cases:
            if case["value_size"] == size:
                case["cpu_bound"] = cpu_bound(case, codec_cpu[case["codec"]])
    below = [f"{c['codec']} {c['value_size']} B" for c in cases if c["ratio_to_ceiling"] < TARGET_SPARK]
    result = {
        "benchmark": "write: Spark format('kafkalog') write vs a counting Python Arrow writer, and Producer.send_batch",
        "method": {
            "spark": "local[2], cached DataFrame, 2-partition topic, one warm-up run each, then best of repeats (kafkalog and ceiling alternate)",
            "ceiling": "a Python DataSourceArrowWriter that only counts the rows of its Arrow batches",
            "batch_api": f"one process, prebuilt Arrow arrays, send_batch calls of {CALL_ROWS:,} rows, timed until every batch is acknowledged",
            "broker": "EmbeddedCluster, one broker process on the same machine",
            "cpu_seconds": "CPU seconds during the best Spark run of each writer, by role (Spark's JVM, its Python workers, the broker process) and for the whole machine (2 cores: at most 2 x seconds)",
            "topics": "every kafkalog run writes into a new topic, deleted (files gone) after the run",
            "page_cache_write_cpu_s_per_gb": "CPU seconds per GB of writing a new file next to the broker's logs, before and after the cases: this VM's cost of first-touched page cache, part of the broker's CPU",
            "cpu_bound": "per case: CPU seconds the machine has at the target (cores x ceiling seconds / target) against the ceiling run's CPU plus the codec's CPU for the same rows (one thread, bench process); negative 'left' means no writer can reach the target here",
            "per_record": "send, send_default_settings and confluent_produce: 300,000 records, best of 3 in turns; send and confluent_produce with per_record_settings",
        },
        "kernels": columnar.HAVE_KERNELS,
        "page_cache_write_cpu_s_per_gb": {"before": page_cache[0], "after": page_cache[1]},
        "spark_write": cases,
        "batch_api": batch_api,
        "target": {
            "min_ratio_to_ceiling": TARGET_SPARK,
            "cases_below": below,
            "batch_api_records_per_s": TARGET_BATCH_API,
            "batch_api_below": [c["codec"] for c in batch_api["send_batch"] if c["records_per_s"] < TARGET_BATCH_API],
            "send_at_least_confluent": batch_api["send_to_confluent"] >= 1.0,
            "cases_below_unreachable_here": [
                f"{c['codec']} {c['value_size']} B"
                for c in cases
                if c["ratio_to_ceiling"] < TARGET_SPARK and not c["cpu_bound"]["reachable_on_this_machine"]
            ],
        },
        "load_average": {"before": [round(v, 2) for v in load_before], "after": [round(v, 2) for v in os.getloadavg()]},
        "machine": machine_info(["pyspark", "pyarrow", "numpy", "confluent-kafka"]),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "write.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("write", result, args.out / "write.png")
    print(f"wrote {args.out / 'write.json'} and write.png; below target: {below or 'none'}")


if __name__ == "__main__":
    main()
