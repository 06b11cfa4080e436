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
  the same data (no codec), for scale.

The broker is an ``EmbeddedCluster`` broker process on the same machine (2 cores shared with Spark and
the producers). Load averages before and after are recorded. Writes ``bench/results/write.json`` and
``write.png``. Run: ``python bench/write_bench.py [--quick]``.
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

from bench.datasource_bench import timed_with_cpu  # noqa: E402
from bench.machine import machine_info  # noqa: E402
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


def new_topic(admin: AdminClient, name: str) -> str:
    admin.create_topics([NewTopic(name, PARTITIONS, 1, {})])
    return name


def figures(records: int, nbytes: int, seconds: float) -> dict:
    return {
        "seconds": round(seconds, 3),
        "records_per_s": round(records / seconds),
        "mb_per_s": round(nbytes / seconds / 1e6, 1),
    }


def spark_cases(spark, admin, bootstrap: str, records: int, repeats: int, codecs) -> list[dict]:
    cases = []
    print(f"{'case':>14} | {'kafkalog':>10} {'ceiling':>10} {'ratio':>6}  (rows/s)", flush=True)
    for size in VALUE_SIZES:
        n = records if size <= 100 else records // 2
        df = frame(spark, n, size)
        df.count()
        nbytes = n * size + sum(len(b"key-%d" % i) for i in range(n))
        for codec in codecs:
            topic = new_topic(admin, f"bench-write-{size}-{codec}-{int(time.time())}")

            def kafkalog():
                df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).options(
                    **{f"kafka.{k}": v for k, v in codec_settings(codec).items()}
                ).mode("append").save()

            def ceiling():
                df.write.format("kafkalog_count").mode("append").save()

            kafkalog()
            ceiling()  # warm-up
            best: dict[str, tuple[float, dict[str, float]]] = {
                "kafkalog": (float("inf"), {}),
                "ceiling": (float("inf"), {}),
            }
            for _ in range(repeats):
                for name, run in (("kafkalog", kafkalog), ("ceiling", ceiling)):
                    measured = timed_with_cpu(run)
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
    import hashlib

    import pyarrow as pa

    keys = [b"key-%d" % i for i in range(records)]
    payloads = [hashlib.sha256(b"%d" % i).hexdigest().encode() * (size // 64 + 1) for i in range(min(records, 4096))]
    values = [(b'{"id":%d,"payload":"' % i + payloads[i % len(payloads)])[: size - 2] + b'"}' for i in range(records)]
    return pa.array(keys, pa.binary()), pa.array(values, pa.binary())


def batch_api_cases(admin, bootstrap: str, records: int, codecs) -> dict:
    keys, values = arrow_rows(records, 100)
    nbytes = sum(len(b"key-%d" % i) for i in range(records)) + records * 100
    out = {"value_size": 100, "records": records, "rows_per_call": CALL_ROWS, "send_batch": []}
    print(f"batch API, 100 B, {records:,} records in calls of {CALL_ROWS:,} rows", flush=True)
    for codec in codecs:
        topic = new_topic(admin, f"bench-batch-api-{codec}-{int(time.time())}")
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
        out["send_batch"].append({"codec": codec, **figures(records, nbytes, seconds)})
        print(f"  send_batch {codec:>6}: {out['send_batch'][-1]['records_per_s']:>10,} rec/s", flush=True)

    per_record = min(records, 300_000)
    key_list, value_list = keys.to_pylist()[:per_record], values.to_pylist()[:per_record]
    topic = new_topic(admin, f"bench-send-{int(time.time())}")
    with Producer(bootstrap, linger_ms=5) as producer:
        producer.send(topic, b"warm-up").result(60)

        def run_send():
            send = producer.send
            for k, v in zip(key_list, value_list):
                send(topic, v, k)
            producer.flush()

        seconds = timed(run_send)
    out["send"] = figures(per_record, nbytes * per_record // records, seconds)
    print(f"  send (per record): {out['send']['records_per_s']:>10,} rec/s", flush=True)

    import confluent_kafka

    topic = new_topic(admin, f"bench-confluent-{int(time.time())}")
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    producer.produce(topic, b"warm-up")
    producer.flush(60)

    def run_confluent():
        produce = producer.produce
        for i, (k, v) in enumerate(zip(key_list, value_list)):
            while True:
                try:
                    produce(topic, v, k)
                    break
                except BufferError:
                    producer.poll(0.05)
            if i % 50_000 == 0:
                producer.poll(0)
        if producer.flush(120) != 0:
            raise RuntimeError("confluent-kafka could not deliver every record")

    seconds = timed(run_confluent)
    out["confluent_produce"] = figures(per_record, nbytes * per_record // records, seconds)
    print(f"  confluent-kafka produce: {out['confluent_produce']['records_per_s']:>10,} rec/s", flush=True)
    return out


def plot(cases: list[dict], batch_api: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({c["value_size"] for c in cases})
    fig, axes = plt.subplots(1, len(sizes) + 1, figsize=(5.5 * (len(sizes) + 1), 4.5))
    for ax, size in zip(axes, sizes):
        rows = [c for c in cases if c["value_size"] == size]
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [c["ceiling"]["records_per_s"] for c in rows], 0.4, label="Arrow-writer ceiling")
        ax.bar([i + 0.2 for i in x], [c["kafkalog"]["records_per_s"] for c in rows], 0.4, label="kafkalog write")
        for i, c in zip(x, rows):
            ax.annotate(
                f"{c['ratio_to_ceiling']:.0%}", (i + 0.2, c["kafkalog"]["records_per_s"]), ha="center", va="bottom"
            )
        ax.set_xticks(list(x), [c["codec"] for c in rows])
        ax.set_title(f"Spark write, {size} B values")
        ax.set_ylabel("rows/s")
        ax.legend(fontsize="small")
    ax = axes[-1]
    labels = [c["codec"] for c in batch_api["send_batch"]] + ["send", "confluent"]
    rates = [c["records_per_s"] for c in batch_api["send_batch"]] + [
        batch_api["send"]["records_per_s"],
        batch_api["confluent_produce"]["records_per_s"],
    ]
    ax.bar(range(len(rates)), rates, color=["C2"] * len(batch_api["send_batch"]) + ["C0", "C1"])
    ax.axhline(TARGET_BATCH_API, color="grey", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(rates)), labels, fontsize="small")
    ax.set_title("one process, 100 B values: send_batch per codec,\nper-record send and confluent-kafka (none)")
    ax.set_ylabel("records/s")
    fig.suptitle("write throughput (labels: kafkalog as a share of the ceiling)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 rows, codecs none and lz4, one repeat")
    parser.add_argument("--records", type=int, default=None, help="rows per Spark case (default 1,000,000)")
    parser.add_argument("--repeats", type=int, default=None, help="Spark runs per figure after a warm-up (default 3)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    records = args.records or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 3)
    codecs = ("none", "lz4") if args.quick else CODECS

    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.datasource import kafkalog_session

    load_before = os.getloadavg()
    started = time.perf_counter()
    with EmbeddedCluster(brokers=1) as cluster, AdminClient(cluster.bootstrap_servers) as admin:
        bootstrap = cluster.bootstrap_servers
        batch_api = batch_api_cases(admin, bootstrap, records, codecs)
        spark = kafkalog_session("local[2]", "kafkalog-write-bench", conf={"spark.ui.enabled": "false"})
        spark.sparkContext.setLogLevel("ERROR")
        spark.dataSource.register(counting_sink())
        cases = spark_cases(spark, admin, bootstrap, records, repeats, codecs)
        spark.stop()
    below = [f"{c['codec']} {c['value_size']} B" for c in cases if c["ratio_to_ceiling"] < TARGET_SPARK]
    result = {
        "benchmark": "write: Spark format('kafkalog') write vs a counting Python Arrow writer, and Producer.send_batch",
        "method": {
            "spark": "local[2], cached DataFrame, 2-partition topic, one warm-up run each, then best of repeats (kafkalog and ceiling alternate)",
            "ceiling": "a Python DataSourceArrowWriter that only counts the rows of its Arrow batches",
            "batch_api": f"one process, prebuilt Arrow arrays, send_batch calls of {CALL_ROWS:,} rows, timed until every batch is acknowledged",
            "broker": "EmbeddedCluster, one broker process on the same machine",
            "cpu_seconds": "CPU seconds during the best Spark run of each writer, by role (Spark's JVM, its Python workers, the broker process) and for the whole machine (2 cores: at most 2 x seconds)",
        },
        "kernels": columnar.HAVE_KERNELS,
        "spark_write": cases,
        "batch_api": batch_api,
        "target": {
            "min_ratio_to_ceiling": TARGET_SPARK,
            "cases_below": below,
            "batch_api_records_per_s": TARGET_BATCH_API,
            "batch_api_below": [c["codec"] for c in batch_api["send_batch"] if c["records_per_s"] < TARGET_BATCH_API],
        },
        "load_average": {"before": [round(v, 2) for v in load_before], "after": [round(v, 2) for v in os.getloadavg()]},
        "machine": machine_info(["pyspark", "pyarrow", "numpy", "confluent-kafka"]),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "write.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(cases, batch_api, args.out / "write.png")
    print(f"wrote {args.out / 'write.json'} and write.png; below target: {below or 'none'}")


if __name__ == "__main__":
    main()
