"""Client throughput against the in-process broker, next to kafka-python and confluent-kafka in the same run.

Produce: ``N`` records of 100-byte and 1000-byte random (incompressible) values with 16-byte keys into a
4-partition topic, acks=all, linger.ms=5, batch.size=256 KiB, no compression, flushed at the end: our
``Producer`` (idempotent, the default), kafka-python's ``KafkaProducer`` and confluent-kafka's ``Producer``.

Fetch: reading the whole topic back - our ``KafkaClient.fetch_batches`` (batches only, the data source's
path, which decodes batches itself), the same plus ``BatchView.records()`` decoding into Python records,
kafka-python's ``KafkaConsumer`` (manual assignment) and confluent-kafka's ``Consumer`` (assign at the
beginning). Each figure is the best of ``--rounds`` rounds; the producers take turns round by round, so
a burst of load from elsewhere on the machine hits all of them alike (the load averages before and after
are recorded; ``produce ours / confluent-kafka`` is the ratio of the two best rates). The broker shares
the machine's cores with the client, so figures are end-to-end on one host, not client-only.

Writes ``bench/results/client.json`` and ``client.png``. Run: ``python -m bench.client_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from broker.server import EmbeddedBroker  # noqa: E402
from spark_kafkalog.client import AdminClient, KafkaClient, NewTopic, OffsetSpec, Producer, TopicPartition  # noqa: E402

PARTITIONS = 4


def make_records(n: int, size: int) -> list[tuple[bytes, bytes]]:
    value = os.urandom(size * 64)
    return [(b"key-%012d" % i, value[(i % 64) * size : (i % 64 + 1) * size]) for i in range(n)]


def new_topic(bootstrap: str) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])
    return name


def produce_ours(bootstrap: str, topic: str, records) -> float:
    start = time.perf_counter()
    with Producer(bootstrap, acks="all", linger_ms=5, batch_size=256 * 1024) as producer:
        send = producer.send
        for key, value in records:
            send(topic, value, key)
        producer.flush()
    return time.perf_counter() - start


def produce_kafka_python(bootstrap: str, topic: str, records) -> float:
    from kafka import KafkaProducer

    start = time.perf_counter()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=256 * 1024)
    for key, value in records:
        producer.send(topic, value=value, key=key)
    producer.flush()
    elapsed = time.perf_counter() - start
    producer.close()
    return elapsed


def produce_confluent(bootstrap: str, topic: str, records) -> float:
    from confluent_kafka import Producer as CKProducer

    start = time.perf_counter()
    producer = CKProducer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, "batch.size": 256 * 1024})
    for key, value in records:
        while True:
            try:
                producer.produce(topic, value, key)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush()
    return time.perf_counter() - start


def fetch_ours(bootstrap: str, topic: str, n: int, decode: bool) -> float:
    start = time.perf_counter()
    count = 0
    with KafkaClient(bootstrap, max_partition_fetch_bytes=4 << 20) as client:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        ends = client.list_offsets({tp: OffsetSpec.LATEST for tp in tps})
        for tp in tps:
            for fetched in client.fetch_batches(tp, 0, ends[tp]):
                if decode:
                    count += len(fetched.batch.records())
                else:
                    count += fetched.batch.last_offset - fetched.batch.base_offset + 1
    elapsed = time.perf_counter() - start
    assert count == n, (count, n)
    return elapsed


def fetch_kafka_python(bootstrap: str, topic: str, n: int) -> float:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTP

    start = time.perf_counter()
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        max_partition_fetch_bytes=4 << 20,
        fetch_max_wait_ms=50,
    )
    tps = [KTP(topic, p) for p in range(PARTITIONS)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    count = 0
    while count < n:
        for recs in consumer.poll(timeout_ms=500, max_records=100_000).values():
            count += len(recs)
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def fetch_confluent(bootstrap: str, topic: str, n: int) -> float:
    from confluent_kafka import OFFSET_BEGINNING
    from confluent_kafka import Consumer as CKConsumer
    from confluent_kafka import TopicPartition as CKTP

    start = time.perf_counter()
    consumer = CKConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"b-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
    )
    consumer.assign([CKTP(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    count = 0
    while count < n:
        count += len(consumer.consume(10_000, timeout=0.5))
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def _kernels_built() -> bool:
    try:
        from spark_kafkalog import _kernels
    except ImportError:
        return False
    return hasattr(_kernels, "append_record")


def best(fn, rounds: int) -> float:
    return min(fn() for _ in range(rounds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20k records instead of 200k")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n = 20_000 if args.quick else 200_000
    results: dict = {
        "scenario": "client produce/fetch throughput, 4 partitions, in-process broker",
        "records": n,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "versions": {p: metadata.version(p) for p in ("kafka-python", "confluent-kafka")},
        "compiled_kernels": _kernels_built(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "sizes": {},
    }
    with (
        tempfile.TemporaryDirectory() as log_dir,
        EmbeddedBroker(0, zookeeper_connect=f"memory:bench-{uuid.uuid4().hex[:6]}", log_dir=log_dir) as broker,
    ):
        bootstrap = broker.bootstrap_servers
        for size in (100, 1000):
            records = make_records(n, size)
            row: dict = {}
            producers = (
                ("ours", produce_ours),
                ("kafka-python", produce_kafka_python),
                ("confluent-kafka", produce_confluent),
            )
            seconds: dict[str, float] = {}
            for _ in range(args.rounds):  # in turns: load from elsewhere hits every client alike
                for name, fn in producers:
                    took = fn(bootstrap, new_topic(bootstrap), records)
                    seconds[name] = min(seconds.get(name, took), took)
            for name, _ in producers:
                row[f"produce {name}"] = n / seconds[name]
            topic = new_topic(bootstrap)
            produce_ours(bootstrap, topic, records)
            row["fetch ours (batches)"] = n / best(lambda: fetch_ours(bootstrap, topic, n, False), args.rounds)
            row["fetch ours (records)"] = n / best(lambda: fetch_ours(bootstrap, topic, n, True), args.rounds)
            row["fetch kafka-python"] = n / best(lambda: fetch_kafka_python(bootstrap, topic, n), args.rounds)
            row["fetch confluent-kafka"] = n / best(lambda: fetch_confluent(bootstrap, topic, n), args.rounds)
            results["sizes"][f"{size} B"] = {k: round(v) for k, v in row.items()}
            results["sizes"][f"{size} B"]["produce ours / confluent-kafka"] = round(
                row["produce ours"] / row["produce confluent-kafka"], 2
            )
            for k, v in row.items():
                print(f"{size:>5} B  {k:<26} {v:>12,.0f} records/s", flush=True)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "client.json").write_text(json.dumps(results, indent=2) + "\n")
    plots.save("client", results, out_dir / "client.png")
    print(f"wrote {out_dir / 'client.json'} and client.png")


if __name__ == "__main__":
    main()
