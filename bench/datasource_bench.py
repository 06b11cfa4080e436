"""Spark batch reads with ``format("kafkalog")`` against their ceiling and other readers, per codec and value size.

For each value size (100 B, 1 KiB) and codec, a 2-partition topic of ``--records`` records (keys
``key-<n>``, JSON-like values that compress about 2:1) is filled by confluent-kafka's producer, then read by:

- ``kafkalog``: ``spark.read.format("kafkalog")...load()`` into Spark's ``noop`` sink (local[2], one task
  per partition), best of ``--repeats`` runs after a warm-up run, each from a fresh ``load()``;
- ``ceiling``: a Python data source yielding Arrow batches of the same schema, row count and sizes that
  are already built in memory (the most a Python data source can deliver on this machine);
- ``client``: one Python process planning and reading both partitions with the data source's own
  ``plan_batch`` and ``read_offset_range`` (fetch and Arrow decoding without Spark);
- ``confluent``: confluent-kafka's (librdkafka) consumer reading the topic with ``consume(10000)``.

The broker is an ``EmbeddedCluster`` broker process on the same machine. Spark's batch write rate is
measured per value size too (``spark.range`` rows into a topic). MB/s counts key + value bytes. Target:
kafkalog >= 70% of the ceiling. Writes ``bench/results/datasource.json`` and ``datasource.png``, with the
machine's load averages before and after (other processes share the cores) and whether the compiled
record walk (``spark_kafkalog._kernels``) was used.

Run: ``python bench/datasource_bench.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.stats import confluent_fill  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic  # noqa: E402
from spark_kafkalog.datasource.options import parse_source_options  # noqa: E402
from spark_kafkalog.datasource.planning import plan_batch  # noqa: E402
from spark_kafkalog.datasource.scan import TARGET_BYTES, TARGET_ROWS, open_client, read_offset_range  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PARTITIONS = 2
VALUE_SIZES = (100, 1024)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
EVENTS = ("click", "view", "purchase", "scroll", "signup", "logout")
TARGET = 0.70


def make_values(count: int, size: int, seed: int = 1) -> list[bytes]:
    """JSON-like values of exactly ``size`` bytes around a random hex payload (about 2:1 compressible)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        head = f'{{"id":{i},"user":"user-{rng.randrange(100_000)}","event":"{rng.choice(EVENTS)}","payload":"'.encode()
        out.append((head + rng.randbytes(size).hex().encode())[: size - 2] + b'"}')
    return out


def fill_topic(bootstrap: str, topic: str, records: int, value_size: int, codec: str) -> float:
    """Produce ``records`` records with confluent-kafka (round-robin over the partitions); seconds taken."""
    values = make_values(4096, value_size)
    return confluent_fill(bootstrap, topic, values, records, PARTITIONS, **{"compression.type": codec})


def payload_bytes(records: int, value_size: int) -> int:
    return sum(len(b"key-%d" % i) for i in range(records)) + records * value_size


def figures(records: int, nbytes: int, seconds: float) -> dict:
    return {
        "seconds": round(seconds, 3),
        "records_per_s": round(records / seconds),
        "mb_per_s": round(nbytes / seconds / 1e6, 1),
    }


def best_of(repeats: int, run) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


# Processes by role, recognised by their command line (Linux /proc).
ROLES = {"spark_jvm": "org.apache.spark", "python_workers": "pyspark.daemon", "broker": "broker.cli"}


def cpu_seconds_by_role() -> dict[str, float]:
    """CPU seconds (user + system) used so far by the live processes of each role, and by the whole
    machine ("machine": busy time of all cores); empty where /proc is not available."""
    import os

    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    out = {role: 0.0 for role in ROLES}
    out["machine"] = (sum(fields) - fields[3] - fields[4]) / tick  # all but idle and iowait
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        for role, marker in ROLES.items():
            if marker in cmdline:
                out[role] += (int(stat[11]) + int(stat[12])) / tick  # utime + stime
    return out


def timed_with_cpu(run) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``run()`` and the CPU seconds each role used meanwhile (processes that started
    and ended within the run are not counted)."""
    before = cpu_seconds_by_role()
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    after = cpu_seconds_by_role()
    return seconds, {role: round(after[role] - before.get(role, 0.0), 2) for role in after}


def spark_read(spark, bootstrap: str, topic: str):
    return spark.read.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()


def ceiling_source(records_per_partition: int, value_size: int, rows_per_batch: int, topic: str):
    """A Python data source yielding the same shape of Arrow batches, built in memory before the first yield
    (the ``topic`` column holds the read topic's name, so it is as large as the real column)."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from spark_kafkalog.datasource import kafka_schema as spark_schema

    class CeilingReader(DataSourceReader):
        def partitions(self):
            return [InputPartition(p) for p in range(PARTITIONS)]

        def read(self, partition):
            import pyarrow as pa

            from spark_kafkalog.datasource.arrow_decode import kafka_schema

            n = rows_per_batch
            values = make_values(64, value_size)
            batch = pa.RecordBatch.from_arrays(
                [
                    pa.array([b"key-%d" % i for i in range(n)], pa.binary()),
                    pa.array([values[i % 64] for i in range(n)], pa.binary()),
                    pa.array([topic] * n, pa.string()),
                    pa.array([partition.value] * n, pa.int32()),
                    pa.array(range(n), pa.int64()),
                    pa.array([1_700_000_000_000_000] * n, pa.timestamp("us", tz="UTC")),
                    pa.array([0] * n, pa.int32()),
                ],
                schema=kafka_schema(False),
            )
            remaining = records_per_partition
            while remaining > 0:
                yield batch if remaining >= n else batch.slice(0, remaining)
                remaining -= n

    class CeilingSource(DataSource):
        @classmethod
        def name(cls):
            return "kafkalog_ceiling"

        def schema(self):
            return spark_schema(False)

        def reader(self, schema):
            return CeilingReader()

    return CeilingSource


def client_read(bootstrap: str, topic: str) -> int:
    """What the read tasks do, in one process: plan, then ``read_offset_range`` each partition."""
    options = parse_source_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic})
    rows = 0
    with open_client(options) as client:
        for offset_range in plan_batch(options, client):
            for batch in read_offset_range(options, offset_range, client):
                rows += batch.num_rows
    return rows


def loopback_transfer_cpu(chunks: list[bytes]) -> float:
    """CPU seconds (both ends) of moving ``chunks`` over a loopback TCP connection: one thread sends
    them, the caller receives into one reused 8 MiB buffer, as any network reader must."""
    import socket
    import threading

    total = sum(len(c) for c in chunks)
    with socket.create_server(("127.0.0.1", 0)) as server:
        sender = socket.create_connection(server.getsockname())
        receiver, _ = server.accept()

    def send() -> None:
        with sender:
            for chunk in chunks:
                sender.sendall(chunk)

    buffer = memoryview(bytearray(8 << 20))
    thread = threading.Thread(target=send)
    started = time.process_time()
    thread.start()
    got = 0
    with receiver:
        while got < total:
            n = receiver.recv_into(buffer)
            if not n:
                break
            got += n
    thread.join()
    return time.process_time() - started


def read_cpu_parts(bootstrap: str, topic: str) -> dict[str, float]:
    """CPU seconds (best of 3) of the parts of a read that every reader of ``topic`` pays, over its record
    batches fetched once into memory: ``transfer`` (the batches over a loopback TCP connection, both
    ends: ``loopback_transfer_cpu``), ``crc`` (CRC-32C of every batch, as a consumer with Kafka's default
    ``check.crcs`` does), ``codec`` (decompressing every batch, one thread) and ``copy`` (one copy of the
    records' bytes: Arrow's binary columns hold values contiguously, record batches do not)."""
    from spark_kafkalog.client import TopicPartition
    from spark_kafkalog.records import crc32c, decompress
    from spark_kafkalog.records.batch import ATTRIBUTES_OFFSET, BATCH_HEADER_SIZE, CODEC_MASK

    options = parse_source_options({"kafka.bootstrap.servers": bootstrap, "subscribe": topic})
    batches = []
    with open_client(options) as client:
        for partition in range(PARTITIONS):
            for fetched in client.fetch_batches(TopicPartition(topic, partition), 0):  # up to the high watermark
                batches.append(bytes(fetched.batch.data))

    def best(run) -> float:
        times = []
        for _ in range(3):
            started = time.process_time()
            run()
            times.append(time.process_time() - started)
        return round(min(times), 3)

    def records(data: bytes):
        codec = data[ATTRIBUTES_OFFSET + 1] & CODEC_MASK  # the low byte of the int16 attributes
        body = memoryview(data)[BATCH_HEADER_SIZE:]
        return decompress(codec, body) if codec else body

    def inflate() -> None:
        for data in batches:
            records(data)

    def crcs() -> None:
        for data in batches:
            crc32c(memoryview(data)[ATTRIBUTES_OFFSET:])

    sections = [records(data) for data in batches]
    target = bytearray(max(len(s) for s in sections))

    def copy() -> None:
        for section in sections:
            target[: len(section)] = section

    transfer = min(loopback_transfer_cpu(batches) for _ in range(3))
    return {"transfer": round(transfer, 3), "crc": best(crcs), "codec": best(inflate), "copy": best(copy)}


def cpu_bound(case: dict, parts: dict[str, float], client_cpu: float) -> dict:
    """Whether the target is within this machine's reach for ``case``: at the target a run may last
    ``ceiling_s / TARGET`` on every core, i.e. use at most ``budget`` CPU seconds; any reader needs at least
    what the ceiling run used (Spark taking Arrow batches from a Python source) plus the parts every reader
    pays (``read_cpu_parts``). ``read_task_cpu``: what the data source's read code (fetch, CRC, decode into
    Arrow) used alone in one process; with the broker's CPU it is this design's share."""
    import os

    budget = (os.cpu_count() or 1) * case["ceiling"]["seconds"] / TARGET
    ceiling_cpu = case["cpu_seconds"]["ceiling"]["machine"]
    left = budget - ceiling_cpu - sum(parts.values())
    return {
        "cpu_budget_at_target": round(budget, 3),
        "ceiling_machine_cpu": ceiling_cpu,
        **{f"{name}_cpu": seconds for name, seconds in parts.items()},
        "left_for_this_readers_own_work": round(left, 3),
        "reachable_on_this_machine": left > 0,
        "read_task_cpu": round(client_cpu, 3),
        "broker_cpu": case["cpu_seconds"]["kafkalog"].get("broker"),
    }


def confluent_read(bootstrap: str, topic: str, expected: int) -> int:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{time.time_ns()}",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 8_388_608,
        }
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    count = 0
    deadline = time.monotonic() + 300
    while count < expected and time.monotonic() < deadline:
        for message in consumer.consume(10_000, timeout=1.0):
            if message.error() is None:
                count += 1
    consumer.close()
    return count


def spark_write(spark, bootstrap: str, topic: str, records: int, value_size: int) -> float:
    df = spark.range(records).selectExpr(
        "CAST(CONCAT('key-', id) AS BINARY) AS key", f"CAST(REPEAT('x', {value_size}) AS BINARY) AS value"
    )
    df.cache().count()
    started = time.perf_counter()
    df.write.format("kafkalog").option("kafka.bootstrap.servers", bootstrap).option("topic", topic).mode(
        "append"
    ).save()
    seconds = time.perf_counter() - started
    df.unpersist()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 records, codecs none and lz4, one repeat")
    parser.add_argument("--records", type=int, default=None, help="records per topic (default 1,000,000)")
    parser.add_argument(
        "--repeats", type=int, default=None, help="runs per Spark figure after a warm-up run, best kept (default 5)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    records = args.records or (100_000 if args.quick else 1_000_000)
    repeats = args.repeats or (1 if args.quick else 5)
    codecs = ("none", "lz4") if args.quick else CODECS

    import os

    from broker.embedded_cluster import EmbeddedCluster
    from spark_kafkalog.datasource import arrow_decode, kafkalog_session

    load_before = os.getloadavg()
    started = time.perf_counter()
    spark = kafkalog_session("local[2]", "kafkalog-bench", conf={"spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    cases, writes = [], []
    with EmbeddedCluster(brokers=1) as cluster, AdminClient(cluster.bootstrap_servers) as admin:
        bootstrap = cluster.bootstrap_servers
        print(
            f"{'case':>14} | {'kafkalog':>10} {'ceiling':>10} {'ratio':>6} | {'client':>10} {'confluent':>10}  (records/s)"
        )
        for size in VALUE_SIZES:
            # the ceiling's batches are as large as the data source's (TARGET_ROWS rows or TARGET_BYTES)
            nbytes = payload_bytes(records, size)
            for codec in codecs:
                topic = f"bench-{size}-{codec}"
                rows_per_batch = min(TARGET_ROWS, TARGET_BYTES // (size + 12))
                spark.dataSource.register(ceiling_source(records // PARTITIONS, size, rows_per_batch, topic))
                admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
                fill_s = fill_topic(bootstrap, topic, records, size, codec)
                count = spark_read(spark, bootstrap, topic).count()
                if count != records:
                    raise SystemExit(f"{topic}: Spark read {count} records, {records} were produced")
                readers = (
                    ("kafkalog", lambda: spark_read(spark, bootstrap, topic)),
                    ("ceiling", lambda: spark.read.format("kafkalog_ceiling").load()),
                )
                best = {"kafkalog": (float("inf"), {}), "ceiling": (float("inf"), {})}
                for n in range(repeats + 1):  # alternate, so that load from other processes hits both alike
                    for name, df in readers:
                        run = timed_with_cpu(lambda: df().write.format("noop").mode("overwrite").save())
                        if n:  # the first round warms the JVM's code paths up for both readers
                            best[name] = min(best[name], run, key=lambda r: r[0])
                (kafkalog_s, kafkalog_cpu), (ceiling_s, ceiling_cpu) = best["kafkalog"], best["ceiling"]
                client_cpu_started = time.process_time()
                client_s = best_of(1, lambda: client_read(bootstrap, topic))
                client_cpu = time.process_time() - client_cpu_started
                confluent_s = best_of(1, lambda: confluent_read(bootstrap, topic, records))
                case = {
                    "value_size": size,
                    "codec": codec,
                    "records": records,
                    "fill_seconds_confluent_producer": round(fill_s, 2),
                    "kafkalog": figures(records, nbytes, kafkalog_s),
                    "ceiling": figures(records, nbytes, ceiling_s),
                    "client": figures(records, nbytes, client_s),
                    "confluent": figures(records, nbytes, confluent_s),
                    "cpu_seconds": {"kafkalog": kafkalog_cpu, "ceiling": ceiling_cpu},
                }
                case["ratio_to_ceiling"] = round(ceiling_s / kafkalog_s, 3)
                case["cpu_bound"] = cpu_bound(case, read_cpu_parts(bootstrap, topic), client_cpu)
                cases.append(case)
                print(
                    f"{codec:>8} {size:>4} B | {case['kafkalog']['records_per_s']:>10,} {case['ceiling']['records_per_s']:>10,} "
                    f"{case['ratio_to_ceiling']:>5.0%} | {case['client']['records_per_s']:>10,} {case['confluent']['records_per_s']:>10,}",
                    flush=True,
                )
                admin.delete_topics([topic])
            write_records = records // 5
            topic = f"bench-write-{size}"
            admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
            spark_write(spark, bootstrap, topic, 1000, size)  # warm up
            seconds = spark_write(spark, bootstrap, topic, write_records, size)
            writes.append(
                {
                    "value_size": size,
                    "records": write_records,
                    **figures(write_records, payload_bytes(write_records, size), seconds),
                }
            )
            print(f"  spark write {size} B: {writes[-1]['records_per_s']:,} rows/s", flush=True)
            admin.delete_topics([topic])
    spark.stop()
    below = [f"{c['codec']} {c['value_size']} B" for c in cases if c["ratio_to_ceiling"] < TARGET]
    result = {
        "benchmark": "datasource: Spark batch read of format('kafkalog') vs the Python data source ceiling, the client alone and confluent-kafka",
        "method": {
            "records_per_topic": records,
            "partitions": PARTITIONS,
            "spark": "local[2], noop sink, one warm-up run each, then best of repeats (kafkalog and ceiling runs alternate), fresh load() per run",
            "repeats": repeats,
            "ceiling": "Python data source yielding pre-built Arrow batches with the same schema, sizes and rows per batch (65,536 rows or 16 MiB)",
            "client": "one process: plan_batch + read_offset_range (the read tasks' code), partitions one after the other",
            "confluent": "confluent-kafka Consumer.consume(10000), assigned partitions from offset 0",
            "fill": "confluent-kafka producer, linger.ms 20, batch.size 1 MB",
            "mb_per_s": "key + value bytes per second (10^6 bytes)",
            "cpu_seconds": "CPU seconds during the best Spark run of each reader, by role (Spark's JVM, its Python workers, the broker process) and for the whole machine (2 cores: at most 2 x seconds)",
            "cpu_bound": "per case: CPU seconds the machine has at the target (cores x ceiling seconds / target) against the ceiling run's CPU plus what every reader pays for the same batches (their transfer over loopback TCP, CRC-32C, decompression, one copy of the records' bytes); negative 'left' means no reader can reach the target here; read_task_cpu is this data source's read code alone (client)",
            "quick": args.quick,
        },
        "machine": machine_info(("pyspark", "pyarrow", "numpy", "confluent-kafka")),
        "load_average_1_5_15_min": {
            "before": [round(v, 2) for v in load_before],
            "after": [round(v, 2) for v in os.getloadavg()],
        },
        "compiled_decode": arrow_decode._kernels is not None,
        "cases": cases,
        "spark_write": writes,
        "target": {
            "min_ratio_to_ceiling": TARGET,
            "cases_below": below,
            "cases_below_unreachable_here": [
                f"{c['codec']} {c['value_size']} B"
                for c in cases
                if c["ratio_to_ceiling"] < TARGET and not c["cpu_bound"]["reachable_on_this_machine"]
            ],
        },
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "datasource.json").write_text(json.dumps(result, indent=2) + "\n")
    plots.save("datasource", result, args.out / "datasource.png")
    print(
        f"below {TARGET:.0%} of the ceiling: {', '.join(below) or 'none'}; wrote {args.out / 'datasource.json'} and datasource.png in {result['elapsed_s']} s"
    )


if __name__ == "__main__":
    main()
