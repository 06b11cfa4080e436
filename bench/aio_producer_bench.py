"""asyncio producers on one broker in the same run: kafkalog's ``AIOProducer`` against aiokafka's
``AIOKafkaProducer``, with kafkalog's blocking ``Producer`` as the reference (issue 29: AIOProducer's
throughput must be at least aiokafka's).

Load: ``N`` records (200k; 20k with ``--quick``) of 100-byte random (incompressible) values with 16-byte keys
into a fresh 4-partition topic per run, ``linger.ms=5``, the default ``batch.size`` (16 KiB) and
``buffer.memory``, no compression, for ``acks=1`` (idempotence off) and ``acks=all`` (idempotence on, as both
clients offer it). The async producers run the way their docs show: ``fut = await producer.send(topic,
value, key=key)`` per record, then ``flush`` and every future awaited; the clock covers construction, start,
every record acknowledged, and close. The blocking producer sends, flushes and closes.

The broker is an ``EmbeddedBroker`` in a child process (its own interpreter and GIL, so the figures are the
client's process against a broker beside it, the two sharing the machine's cores). Each figure is the best
of ``--rounds`` rounds; the producers take turns round by round, so a burst of load from elsewhere hits all
alike (load averages before and after are recorded). ``AIOProducer / aiokafka`` is the ratio of the best
rates.

Writes ``bench/results/aio_producer.json`` and ``aio_producer.png``. Run: ``python -m bench.aio_producer_bench
[--quick] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic, Producer  # noqa: E402
from spark_kafkalog.client.aio.producer import AIOProducer  # noqa: E402

PARTITIONS = 4
LINGER_MS = 5
ACKS = ("1", "all")

_BROKER_SCRIPT = """
import sys, tempfile, uuid
from broker.server import EmbeddedBroker
with tempfile.TemporaryDirectory() as d:
    broker = EmbeddedBroker(0, zookeeper_connect=f"memory:aio-bench-{uuid.uuid4().hex[:6]}", log_dir=d).start()
    print(broker.bootstrap_servers, flush=True)
    sys.stdin.read()  # until the parent closes our stdin
    broker.stop()
"""


class BrokerProcess:
    """An ``EmbeddedBroker`` in a child Python process; stopped when its stdin closes."""

    def __enter__(self) -> BrokerProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BROKER_SCRIPT], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.bootstrap_servers = self.process.stdout.readline().strip()
        if not self.bootstrap_servers:
            raise RuntimeError("the broker process did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def make_records(n: int, size: int) -> list[tuple[bytes, bytes]]:
    value = os.urandom(size * 64)
    return [(b"key-%012d" % i, value[(i % 64) * size : (i % 64 + 1) * size]) for i in range(n)]


def new_topic(bootstrap: str) -> str:
    name = f"aio-bench-{uuid.uuid4().hex[:8]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, PARTITIONS, 1)])
    return name


async def _ours(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], acks: str) -> float:
    start = time.perf_counter()
    producer = AIOProducer(bootstrap, acks=acks, linger_ms=LINGER_MS, enable_idempotence=acks == "all")
    await producer.start()
    send = producer.send
    futures = [await send(topic, value, key=key) for key, value in records]
    await producer.flush()
    for future in futures:
        await future
    await producer.close()
    return time.perf_counter() - start


async def _aiokafka(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], acks: str) -> float:
    from aiokafka import AIOKafkaProducer

    start = time.perf_counter()
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all" if acks == "all" else int(acks),
        linger_ms=LINGER_MS,
        enable_idempotence=acks == "all",
    )
    await producer.start()
    send = producer.send
    futures = [await send(topic, value, key=key) for key, value in records]
    await producer.flush()
    for future in futures:
        await future
    await producer.stop()
    return time.perf_counter() - start


def produce_ours(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], acks: str) -> float:
    return asyncio.run(_ours(bootstrap, topic, records, acks))


def produce_aiokafka(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], acks: str) -> float:
    return asyncio.run(_aiokafka(bootstrap, topic, records, acks))


def produce_blocking(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]], acks: str) -> float:
    start = time.perf_counter()
    with Producer(bootstrap, acks=acks, linger_ms=LINGER_MS, enable_idempotence=acks == "all") as producer:
        send = producer.send
        for key, value in records:
            send(topic, value, key)
        producer.flush()
    return time.perf_counter() - start


PRODUCERS: tuple[tuple[str, Callable[[str, str, list[tuple[bytes, bytes]], str], float]], ...] = (
    ("AIOProducer", produce_ours),
    ("aiokafka", produce_aiokafka),
    ("Producer", produce_blocking),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20k records instead of 200k")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n = 20_000 if args.quick else 200_000
    results: dict = {
        "scenario": f"asyncio producers, {n:,} records of 100 B, {PARTITIONS} partitions, linger.ms={LINGER_MS}",
        "records": n,
        "value_bytes": 100,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "versions": {p: metadata.version(p) for p in ("aiokafka",)},
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "acks": {},
    }
    records = make_records(n, 100)
    with BrokerProcess() as broker:
        bootstrap = broker.bootstrap_servers
        for acks in ACKS:
            seconds: dict[str, float] = {}
            for _ in range(args.rounds):  # in turns: load from elsewhere hits every client alike
                for name, fn in PRODUCERS:
                    took = fn(bootstrap, new_topic(bootstrap), records, acks)
                    seconds[name] = min(seconds.get(name, took), took)
            row = {name: round(n / seconds[name]) for name, _ in PRODUCERS}
            for name, rate in row.items():
                print(f"acks={acks:<3} {name:<12} {rate:>10,} records/s", flush=True)
            results["acks"][acks] = {
                "records_per_s": row,
                "aio_vs_aiokafka": round(row["AIOProducer"] / row["aiokafka"], 2),
            }
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "aio_producer.json").write_text(json.dumps(results, indent=2) + "\n")
    plots.save("aio_producer", results, out_dir / "aio_producer.png")
    print(f"wrote {out_dir / 'aio_producer.json'} and aio_producer.png")


if __name__ == "__main__":
    main()
