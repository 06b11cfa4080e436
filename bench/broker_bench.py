"""Broker throughput and latency with confluent-kafka (librdkafka) as the load generator, against one broker.

The broker runs as its own process (ZooKeeper plus one broker via ``EmbeddedCluster``); the load generator
runs here. Scenarios:

* produce: 100 B and 1 KiB values, compression none and lz4, acks=1 and acks=all; MB/s of record
  values, records/s;
* produce latency at acks=1: a paced producer (``--latency-rate`` records/s, ``linger.ms=0``), p50/p99 of
  librdkafka's per-message latency (enqueue to acknowledgement);
* consume: a librdkafka consumer with manual assignment reading the 1 KiB uncompressed topic from the start;
* raw: pre-encoded Produce and Fetch requests of 1 MiB batches, 8 in flight, so the figure is the
  broker's own rate (confluent-kafka's Python side costs about 1-2 us per record, which caps the rows
  above, most visibly for 100 B records and for consuming).

Each figure sits next to a machine limit measured in the same run on the same loopback:
* produce limit: a plain Python server process that reads a socket and writes the bytes to a file
  (what a broker must do at least), fed with the same number of bytes in 1 MiB writes;
* fetch limit: ``os.sendfile`` of a file over loopback to a reader process that discards the bytes.
Targets (from the issue): produce >= 50% of its limit, fetch >= 70%. Shares count record-value bytes, so
with lz4 (fewer bytes on the wire and on disk) a share can pass 100%; the uncompressed rows are the
fair comparison.

Writes ``bench/results/broker.json`` and ``broker.png``. Run: ``python -m bench.broker_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import os
import platform
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "bench" / "results"


# -- machine limits ------------------------------------------------------------------------------
def _accept_one(port_q: mp.Queue) -> socket.socket:
    """Listen on a free loopback port, report it through ``port_q``, return the first connection."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        port_q.put(srv.getsockname()[1])
        return srv.accept()[0]


def _sink_to_file(port_q: mp.Queue, path: str) -> None:
    conn = _accept_one(port_q)
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    with open(path, "wb") as f:
        while True:
            n = conn.recv_into(buf)
            if not n:
                break
            f.write(view[:n])
    conn.close()


def produce_limit(total_bytes: int) -> float:
    """MB/s of socket -> file in a plain Python process."""
    with tempfile.TemporaryDirectory() as d:
        q: mp.Queue = mp.Queue()
        proc = mp.Process(target=_sink_to_file, args=(q, os.path.join(d, "sink")))
        proc.start()
        port = q.get(timeout=10)
        chunk = os.urandom(1 << 20)
        s = socket.create_connection(("127.0.0.1", port))
        start = time.perf_counter()
        sent = 0
        while sent < total_bytes:
            s.sendall(chunk)
            sent += len(chunk)
        s.shutdown(socket.SHUT_WR)
        proc.join()
        elapsed = time.perf_counter() - start
        s.close()
    return sent / elapsed / 1e6


def _discard(port_q: mp.Queue) -> None:
    conn = _accept_one(port_q)
    buf = bytearray(1 << 20)
    while conn.recv_into(buf):
        pass
    conn.close()


def fetch_limit(total_bytes: int) -> float:
    """MB/s of os.sendfile from a file over loopback to a discarding reader process."""
    with tempfile.NamedTemporaryFile() as f:
        block = os.urandom(1 << 20)
        for _ in range(max(total_bytes >> 20, 1)):
            f.write(block)
        f.flush()
        size = os.fstat(f.fileno()).st_size
        q: mp.Queue = mp.Queue()
        proc = mp.Process(target=_discard, args=(q,))
        proc.start()
        s = socket.create_connection(("127.0.0.1", q.get(timeout=10)))
        start = time.perf_counter()
        offset = 0
        while offset < size:
            offset += os.sendfile(s.fileno(), f.fileno(), offset, size - offset)
        s.shutdown(socket.SHUT_WR)
        proc.join()
        elapsed = time.perf_counter() - start
        s.close()
    return size / elapsed / 1e6


# -- load ----------------------------------------------------------------------------------------
def create_topic(bootstrap: str, name: str) -> None:
    from spark_kafkalog.client import AdminClient, NewTopic

    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, 1, 1, {})])


def produce(bootstrap: str, topic: str, count: int, size: int, codec: str, acks: str) -> dict:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "compression.type": codec,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    value = (os.urandom(size // 4).hex().encode() * 2)[:size]  # half-compressible, like text payloads
    failed = []

    def on_delivery(err, _msg):
        if err is not None:
            failed.append(err)

    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                p.produce(topic, value, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10_000 == 0:
            p.poll(0)
    left = p.flush(120)
    elapsed = time.perf_counter() - start
    if failed or left:
        raise RuntimeError(f"{len(failed)} deliveries failed ({failed[:1]}), {left} not delivered")
    return {
        "records": count,
        "value_bytes": size,
        "codec": codec,
        "acks": acks,
        "seconds": elapsed,
        "records_per_s": count / elapsed,
        "mb_per_s": count * size / elapsed / 1e6,
    }


def produce_latency(bootstrap: str, topic: str, rate: int, seconds: float) -> dict:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 0})
    latencies: list[float] = []
    p.produce(topic, b"warm-up", on_delivery=lambda e, m: None)
    p.flush(10)

    def on_delivery(err, msg):
        if err is None:
            latencies.append(msg.latency())

    value = b"x" * 100
    interval = 1 / rate
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        target = start + n * interval
        while time.perf_counter() < target:
            p.poll(0)
        p.produce(topic, value, on_delivery=on_delivery)
        n += 1
    p.flush(30)
    latencies.sort()
    return {
        "rate": rate,
        "records": len(latencies),
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "max_ms": latencies[-1] * 1000,
    }


def consume(bootstrap: str, topic: str, count: int, size: int) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 10_485_760,
        }
    )
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    nbytes = 0
    start = None  # timed from the first record: connection set-up and metadata are not throughput
    deadline = time.perf_counter() + 300
    while got < count - 1 and time.perf_counter() < deadline:  # the first record only starts the clock
        for m in c.consume(10_000, 1.0):
            if m.error() is None:
                if start is None:
                    start = time.perf_counter()
                    continue
                got += 1
                nbytes += len(m.value())
    elapsed = time.perf_counter() - start
    c.close()
    return {
        "records": got,
        "value_bytes": size,
        "seconds": elapsed,
        "records_per_s": got / elapsed,
        "mb_per_s": nbytes / elapsed / 1e6,
    }


def raw_produce_and_fetch(bootstrap: str, topic: str, total_bytes: int) -> dict:
    """The broker alone: pre-encoded Produce v9 requests (one 1 MiB batch of 1 KiB records, acks=1) and
    Fetch v12 requests over the same data, 8 in flight on one connection; the client does no per-record work.
    """
    from bench.event_loop_bench import pipeline
    from spark_kafkalog.protocol import API_BY_KEY, ApiKey, encode_request
    from spark_kafkalog.records import Compression, RecordBatchBuilder

    P = API_BY_KEY[ApiKey.PRODUCE].Request
    F = API_BY_KEY[ApiKey.FETCH].Request
    per_batch = 1000
    b = RecordBatchBuilder(Compression.NONE)
    for _ in range(per_batch):
        b.append(1_700_000_000_000, None, os.urandom(512).hex().encode(), [])
    batch = b.build()
    n = max(total_bytes // len(batch), 8)
    produce_frames = [
        encode_request(
            ApiKey.PRODUCE,
            9,
            i,
            P(
                acks=1,
                timeout_ms=30_000,
                topic_data=[
                    P.TopicProduceData(
                        name=topic, partition_data=[P.TopicProduceData.PartitionProduceData(index=0, records=batch)]
                    )
                ],
            ),
            client_id="raw",
            framed=True,
        )
        for i in range(n)
    ]
    fetch_frames = [
        encode_request(
            ApiKey.FETCH,
            12,
            i,
            F(
                replica_id=-1,
                max_wait_ms=0,
                min_bytes=1,
                max_bytes=len(batch),
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=[
                    F.FetchTopic(
                        topic=topic,
                        partitions=[
                            F.FetchTopic.FetchPartition(
                                partition=0, fetch_offset=i * per_batch, partition_max_bytes=len(batch)
                            )
                        ],
                    )
                ],
                forgotten_topics_data=[],
                rack_id="",
            ),
            client_id="raw",
            framed=True,
        )
        for i in range(n)
    ]
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        produce_s, _ = pipeline(sock, produce_frames, 8)
        fetch_s, fetched = pipeline(sock, fetch_frames, 8)
    return {
        "batches": n,
        "batch_bytes": len(batch),
        "produce_mb_per_s": n * len(batch) / produce_s / 1e6,
        "fetch_mb_per_s": fetched / fetch_s / 1e6,
    }


def main(argv: list[str] | None = None) -> dict:
    from broker.embedded_cluster import EmbeddedCluster

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--latency-rate", type=int, default=2000)
    args = ap.parse_args(argv)
    mb = 16 if args.quick else 128
    counts = {100: mb * 10_000, 1024: mb * 1_000}
    out = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "quick": args.quick,
        "produce": [],
        "limits": {},
    }
    out["limits"]["produce_mb_per_s"] = produce_limit(mb << 20)
    out["limits"]["fetch_mb_per_s"] = fetch_limit(max(mb, 64) << 20)
    print(
        f"limits: socket->file {out['limits']['produce_mb_per_s']:.0f} MB/s, "
        f"sendfile {out['limits']['fetch_mb_per_s']:.0f} MB/s",
        flush=True,
    )
    with EmbeddedCluster(1) as cluster:
        bs = cluster.bootstrap_servers
        consume_topic = None
        for size in (100, 1024):
            for codec in ("none", "lz4"):
                for acks in ("1", "all"):
                    topic = f"bench-{size}-{codec}-{acks}"
                    create_topic(bs, topic)
                    r = produce(bs, topic, counts[size], size, codec, acks)
                    r["share_of_limit"] = r["mb_per_s"] / out["limits"]["produce_mb_per_s"]
                    out["produce"].append(r)
                    print(
                        f"produce {size:>4} B {codec:>4} acks={acks:<3}: {r['records_per_s']:>9,.0f} rec/s "
                        f"{r['mb_per_s']:7.1f} MB/s ({r['share_of_limit']:.0%} of limit)",
                        flush=True,
                    )
                    if size == 1024 and codec == "none" and acks == "1":
                        consume_topic = topic
        create_topic(bs, "bench-latency")
        out["latency"] = produce_latency(bs, "bench-latency", args.latency_rate, 2 if args.quick else 5)
        print(
            f"latency acks=1 at {args.latency_rate}/s: p50 {out['latency']['p50_ms']:.2f} ms, "
            f"p99 {out['latency']['p99_ms']:.2f} ms",
            flush=True,
        )
        out["consume"] = consume(bs, consume_topic, counts[1024], 1024)
        out["consume"]["share_of_limit"] = out["consume"]["mb_per_s"] / out["limits"]["fetch_mb_per_s"]
        create_topic(bs, "bench-raw")
        raw = out["raw"] = raw_produce_and_fetch(bs, "bench-raw", mb << 20)
        raw["produce_share_of_limit"] = raw["produce_mb_per_s"] / out["limits"]["produce_mb_per_s"]
        raw["fetch_share_of_limit"] = raw["fetch_mb_per_s"] / out["limits"]["fetch_mb_per_s"]
        print(
            f"raw requests (broker alone): produce {raw['produce_mb_per_s']:.0f} MB/s "
            f"({raw['produce_share_of_limit']:.0%}), fetch {raw['fetch_mb_per_s']:.0f} MB/s "
            f"({raw['fetch_share_of_limit']:.0%})",
            flush=True,
        )
        print(
            f"consume 1024 B: {out['consume']['records_per_s']:,.0f} rec/s {out['consume']['mb_per_s']:.1f} MB/s "
            f"({out['consume']['share_of_limit']:.0%} of limit)",
            flush=True,
        )
    out["targets"] = {
        "produce_target": 0.5,
        "fetch_target": 0.7,
        "produce_share_confluent_1k_none_acks1": next(
            r["share_of_limit"]
            for r in out["produce"]
            if r["value_bytes"] == 1024 and r["codec"] == "none" and r["acks"] == "1"
        ),
        "fetch_share_confluent": out["consume"]["share_of_limit"],
        "produce_share_raw": out["raw"]["produce_share_of_limit"],
        "fetch_share_raw": out["raw"]["fetch_share_of_limit"],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "broker.json").write_text(json.dumps(out, indent=2) + "\n")
    from bench import plots

    plots.save("broker", out, RESULTS / "broker.png")
    return out


if __name__ == "__main__":
    main()
