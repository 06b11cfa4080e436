"""Group coordinator figures: offset commits per second, OffsetFetch latency, and rebalance time.

Against one broker process (ZooKeeper plus one broker via ``EmbeddedCluster``):

* commits: OffsetCommit requests of one partition each, pre-encoded, ``--in-flight`` pipelined on one
  connection (the coordinator's own rate: each commit is an append to ``__consumer_offsets`` plus a cache
  update), and the same through ``AdminClient.alter_group_offsets`` (one request at a time, the client's
  round trip included);
* OffsetFetch: p50/p99 latency of single-partition fetches served from the coordinator's cache;
* rebalance: 10 confluent-kafka consumers (range) in one group on a 20-partition topic; one closes and the
  time until the other 9 own all 20 partitions again, each exactly once, is measured; then again from 9
  and from 8 members (the slowest of the three is reported). Goal: within the rebalance timeout
  (``max.poll.interval.ms``) plus one heartbeat interval.

Writes ``bench/results/groups.json`` and ``groups.png``. Run: ``python -m bench.groups_bench [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import plots  # noqa: E402
from bench.machine import machine_info  # noqa: E402
from bench.rebalance_bench import HEARTBEAT_MS, MAX_POLL_MS, rebalance_after_leave  # noqa: E402
from broker.embedded_cluster import EmbeddedCluster  # noqa: E402
from spark_kafkalog.client import AdminClient, NewTopic, TopicPartition  # noqa: E402
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, decode_response, encode_request  # noqa: E402

RESULTS = ROOT / "bench" / "results"
K = ApiKey


def _read(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the broker")
        buf += chunk
    return bytes(buf)


def _coordinator_address(bootstrap: str, group: str) -> tuple[str, int]:
    with AdminClient(bootstrap) as admin:
        node = admin._groups.coordinator(group)
        address = admin.client.broker_address(node)
        assert address is not None
        return address.host, address.port


def commits_pipelined(bootstrap: str, topic: str, n: int, in_flight: int) -> dict:
    group = "bench-commits"
    R = API_BY_KEY[K.OFFSET_COMMIT].Request
    version = 8
    frames = []
    for i in range(n):
        body = R(
            group_id=group,
            generation_id_or_member_epoch=-1,
            member_id="",
            group_instance_id=None,
            retention_time_ms=-1,
            topics=[
                R.OffsetCommitRequestTopic(
                    name=topic,
                    partitions=[
                        R.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                            partition_index=i % 4,
                            committed_offset=i,
                            committed_leader_epoch=-1,
                            commit_timestamp=-1,
                            committed_metadata=None,
                        )
                    ],
                )
            ],
        )
        frames.append(encode_request(K.OFFSET_COMMIT, version, i, body, client_id="bench", framed=True))
    with socket.create_connection(_coordinator_address(bootstrap, group)) as s:
        errors = 0
        t0 = time.perf_counter()
        sent = received = 0
        while received < n:
            while sent < n and sent - received < in_flight:
                s.sendall(frames[sent])
                sent += 1
            size = struct.unpack(">i", _read(s, 4))[0]
            _, resp = decode_response(K.OFFSET_COMMIT, version, _read(s, size))
            errors += sum(p.error_code != 0 for t in resp.topics for p in t.partitions)
            received += 1
        elapsed = time.perf_counter() - t0
    return {
        "commits": n,
        "in_flight": in_flight,
        "seconds": round(elapsed, 3),
        "per_s": round(n / elapsed),
        "errors": errors,
    }


def commits_through_admin(bootstrap: str, topic: str, n: int) -> dict:
    group = "bench-admin-commits"
    with AdminClient(bootstrap) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 0})  # coordinator found, topic warm
        t0 = time.perf_counter()
        for i in range(n):
            admin.alter_group_offsets(group, {TopicPartition(topic, i % 4): i})
        elapsed = time.perf_counter() - t0
    return {"commits": n, "seconds": round(elapsed, 3), "per_s": round(n / elapsed)}


def offset_fetch_latency(bootstrap: str, topic: str, n: int) -> dict:
    group = "bench-commits"
    R = API_BY_KEY[K.OFFSET_FETCH].Request
    version = 7
    body = R(
        group_id=group, topics=[R.OffsetFetchRequestTopic(name=topic, partition_indexes=[0])], require_stable=False
    )
    frame = encode_request(K.OFFSET_FETCH, version, 1, body, client_id="bench", framed=True)
    latencies = []
    with socket.create_connection(_coordinator_address(bootstrap, group)) as s:
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(frame)
            size = struct.unpack(">i", _read(s, 4))[0]
            decode_response(K.OFFSET_FETCH, version, _read(s, size))
            latencies.append((time.perf_counter() - t0) * 1000)
    latencies.sort()
    return {
        "requests": n,
        "p50_ms": round(statistics.median(latencies), 3),
        "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 3),
    }


def rebalance(bootstrap: str) -> dict:
    """10 confluent-kafka consumers (classic protocol, range, eager) on a 20-partition topic, three leaves
    (``bench.rebalance_bench.rebalance_after_leave``), against the goal: the rebalance timeout
    (``max.poll.interval.ms``) plus one heartbeat interval."""
    result = rebalance_after_leave(bootstrap, 10, 20, 3, group_protocol="classic")
    result["goal_s"] = (MAX_POLL_MS + HEARTBEAT_MS) / 1000
    result["within_goal"] = result["rebalanced"] and result["seconds_after_leave"] <= result["goal_s"]
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--out", default=str(RESULTS / "groups.json"))
    args = parser.parse_args(argv)
    n = 2000 if args.quick else 20000
    with EmbeddedCluster(
        1,
        data_dir=tempfile.mkdtemp(prefix="kafkalog-groups-bench-"),
        broker_config={"group.initial.rebalance.delay.ms": 0, "group.min.session.timeout.ms": 1000},
    ) as cluster:
        bs = cluster.bootstrap_servers
        with AdminClient(bs) as admin:
            admin.create_topics([NewTopic("bench-offsets", 4, 1)])
        result = {
            "machine": machine_info(["confluent-kafka"]),
            "commits_pipelined": commits_pipelined(bs, "bench-offsets", n, args.in_flight),
            "commits_admin_client": commits_through_admin(bs, "bench-offsets", n // 10),
            "offset_fetch": offset_fetch_latency(bs, "bench-offsets", n // 4),
            "rebalance": rebalance(bs),
        }
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    plots.save("groups", result, Path(args.out).with_suffix(".png"))
    return result


if __name__ == "__main__":
    main()
