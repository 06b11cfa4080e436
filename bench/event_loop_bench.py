"""asyncio vs uvloop for the broker's event loop: small pipelined requests per second, in-process broker.

Each round starts an in-process broker on one loop implementation, then a raw client pipelines
``--requests`` Produce v9 requests (one 10-record batch of 100 B values, acks=1) with up to 16 in flight,
and the same number of Fetch v12 requests. Best of ``--repeats`` rounds, alternating implementations.
Writes ``bench/results/event_loop.json``. Run: ``python -m bench.event_loop_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from spark_kafkalog.protocol import API_BY_KEY, ApiKey, encode_request  # noqa: E402
from spark_kafkalog.records import Compression, RecordBatchBuilder  # noqa: E402

RESULTS = ROOT / "bench" / "results"
IN_FLIGHT = 16


def pipeline(sock: socket.socket, frames: list[bytes], in_flight: int = IN_FLIGHT) -> tuple[float, int]:
    """Send ``frames`` keeping up to ``in_flight`` unanswered; returns (seconds, response bytes received)."""
    start = time.perf_counter()
    sent = received = 0
    total = 0
    buf = bytearray()
    while received < len(frames):
        while sent < len(frames) and sent - received < in_flight:
            sock.sendall(frames[sent])
            sent += 1
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        buf += chunk
        while len(buf) >= 4:
            size = struct.unpack_from(">i", buf)[0]
            if len(buf) < 4 + size:
                break
            del buf[: 4 + size]
            total += size
            received += 1
    return time.perf_counter() - start, total


def one_round(loop_choice: str, requests: int) -> dict:
    from broker.server import EmbeddedBroker

    P = API_BY_KEY[ApiKey.PRODUCE].Request
    F = API_BY_KEY[ApiKey.FETCH].Request
    b = RecordBatchBuilder(Compression.NONE)
    for _ in range(10):
        b.append(1_700_000_000_000, None, b"v" * 100, [])
    batch = b.build()
    with EmbeddedBroker(0, zookeeper_connect=f"memory:loop-{uuid.uuid4().hex}", event_loop=loop_choice) as broker:
        from spark_kafkalog.client import AdminClient, NewTopic

        with AdminClient(broker.bootstrap_servers) as admin:
            admin.create_topics([NewTopic("t", 1, 1, {})])
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
        produce = [
            encode_request(
                ApiKey.PRODUCE,
                9,
                i,
                P(
                    acks=1,
                    timeout_ms=5000,
                    topic_data=[
                        P.TopicProduceData(
                            name="t", partition_data=[P.TopicProduceData.PartitionProduceData(index=0, records=batch)]
                        )
                    ],
                ),
                client_id="b",
                framed=True,
            )
            for i in range(requests)
        ]
        fetch = [
            encode_request(
                ApiKey.FETCH,
                12,
                i,
                F(
                    replica_id=-1,
                    max_wait_ms=0,
                    min_bytes=0,
                    max_bytes=65536,
                    isolation_level=0,
                    session_id=0,
                    session_epoch=-1,
                    topics=[
                        F.FetchTopic(
                            topic="t",
                            partitions=[
                                F.FetchTopic.FetchPartition(
                                    partition=0, fetch_offset=(i * 10) % (requests * 10), partition_max_bytes=65536
                                )
                            ],
                        )
                    ],
                    forgotten_topics_data=[],
                    rack_id="",
                ),
                client_id="b",
                framed=True,
            )
            for i in range(requests)
        ]
        out = {
            "produce_per_s": requests / pipeline(sock, produce)[0],
            "fetch_per_s": requests / pipeline(sock, fetch)[0],
        }
        sock.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    requests = 3_000 if args.quick else args.requests
    best = {"asyncio": {}, "uvloop": {}}
    for r in range(args.repeats):
        for choice in ("asyncio", "uvloop") if r % 2 == 0 else ("uvloop", "asyncio"):
            got = one_round(choice, requests)
            for k, v in got.items():
                best[choice][k] = max(best[choice].get(k, 0), v)
    out = {
        "requests": requests,
        "in_flight": IN_FLIGHT,
        "best_of": args.repeats,
        **best,
        "uvloop_speedup": {k: best["uvloop"][k] / best["asyncio"][k] for k in best["asyncio"]},
    }
    for choice in ("asyncio", "uvloop"):
        print(
            f"{choice:>8}: produce {best[choice]['produce_per_s']:,.0f} req/s, fetch {best[choice]['fetch_per_s']:,.0f} req/s"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "event_loop.json").write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
