"""The broker attacked, crashed and misused while healthy clients keep working (issue 10's rerun).

A 3-broker cluster (real ZooKeeper, broker processes) serves a healthy confluent-kafka producer
(acks=all) and a healthy consumer for the whole run, while these phases hit it, in order:

1. size prefixes: hundreds of connections each announce a 100 MB request and send nothing more;
2. long polls: hundreds of Fetches with ``max_wait_ms`` = 2^31-1, whose clients then disconnect;
3. oversized CreateTopics (100,000 and 22,000 partitions) and CreatePartitions;
4. the longest legal topic name through create / produce / delete / re-create;
5. legacy-format fuzz: mutated Produce v0-v2 message sets on several connections;
6. garbage checkpoints: a broker SIGKILLed, its checkpoint files overwritten with bytes that are not
   UTF-8, restarted;
7. SIGKILL of one broker and an immediate restart;
8. SIGKILL of the whole cluster (ZooKeeper included) and a restart on the same data dir.

Recorded per phase: the answer or outcome, wall time, each broker's resident memory and open file
descriptors before and after, and whether the healthy clients were served meanwhile. At the end every
record the healthy producer had acknowledged is looked up by offset: ``lost`` must be 0.

Writes ``bench/results/abuse.json``. Run: ``python -m bench.abuse [--quick]``; the opt-in test
``tests/integration/test_abuse.py`` (``-m slow``) runs the quick variant and asserts the outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import machine_info  # noqa: E402
from broker.embedded_cluster import EmbeddedCluster  # noqa: E402
from broker.processes import free_port  # noqa: E402
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode, decode_response, encode_request  # noqa: E402
from spark_kafkalog.records.compression import compress  # noqa: E402
from spark_kafkalog.records.legacy import encode_message  # noqa: E402

RESULTS = ROOT / "bench" / "results"
K = ApiKey
MiB = 1024 * 1024
HEALTHY_TOPIC = "abuse-healthy"


# -- observing broker processes ---------------------------------------------------------------------
def _proc_status(pid: int) -> dict:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) * 1024
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return {"alive": False}
    out["alive"] = True
    return out


def snapshot(cluster: EmbeddedCluster) -> dict:
    return {str(b): _proc_status(p.pid) for b, p in cluster.processes.items()}


# -- a raw protocol peer ---------------------------------------------------------------------------
def _address(cluster: EmbeddedCluster, broker_id: int) -> tuple[str, int]:
    return cluster.host, cluster.ports[broker_id]


def call(address: tuple[str, int], api_key: int, version: int, body, timeout: float = 30.0):
    with socket.create_connection(address, timeout=timeout) as s:
        s.sendall(encode_request(api_key, version, 7, body, client_id="abuse", framed=True))
        size = struct.unpack(">i", _read(s, 4))[0]
        return decode_response(api_key, version, _read(s, size))[1]


def _read(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the broker")
        buf += chunk
    return bytes(buf)


def healthy_ping(cluster: EmbeddedCluster) -> dict:
    """ApiVersions + Metadata on a fresh connection to every running broker: served, and how fast."""
    out = {}
    for b in cluster.processes:
        t0 = time.monotonic()
        try:
            call(
                _address(cluster, b),
                K.API_VERSIONS,
                3,
                API_BY_KEY[K.API_VERSIONS].Request(client_software_name="abuse", client_software_version="1"),
                timeout=10,
            )
            md = call(
                _address(cluster, b),
                K.METADATA,
                9,
                API_BY_KEY[K.METADATA].Request(
                    topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False
                ),
                timeout=10,
            )
            out[str(b)] = {
                "served": True,
                "ms": round((time.monotonic() - t0) * 1000, 1),
                "brokers_registered": sorted(x.node_id for x in md.brokers),
            }
        except OSError as e:
            out[str(b)] = {"served": False, "error": str(e)}
    return out


# -- the healthy clients ---------------------------------------------------------------------------
class HealthyProducer(threading.Thread):
    """confluent-kafka, acks=all; remembers every acknowledged (partition, offset) -> value."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True, name="healthy-producer")
        from confluent_kafka import Producer

        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "linger.ms": 5,
                "message.timeout.ms": 60000,
                "reconnect.backoff.max.ms": 500,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        self.acked: dict[tuple[int, int], bytes] = {}
        self.failed = 0
        self.sent = 0
        self.stop_event = threading.Event()
        self.acks_by_second: dict[int, int] = {}

    def _report(self, err, msg) -> None:
        if err is not None:
            self.failed += 1
            return
        self.acked[(msg.partition(), msg.offset())] = msg.value()
        sec = int(time.time())
        self.acks_by_second[sec] = self.acks_by_second.get(sec, 0) + 1

    def run(self) -> None:
        seq = 0
        while not self.stop_event.is_set():
            try:
                self.producer.produce(
                    HEALTHY_TOPIC, key=str(seq % 97).encode(), value=f"v{seq}".encode(), on_delivery=self._report
                )
                seq += 1
                self.sent = seq
            except BufferError:
                pass
            self.producer.poll(0.002)
        self.producer.flush(90)

    def acks_between(self, t0: float, t1: float) -> int:
        return sum(n for s, n in self.acks_by_second.items() if t0 - 1 <= s <= t1)


# -- phases ----------------------------------------------------------------------------------------
def phase_size_prefixes(cluster, connections: int) -> dict:
    target = _address(cluster, 1)
    before = snapshot(cluster)["1"]
    socks = []
    for _ in range(connections):
        s = socket.create_connection(target, timeout=10)
        s.sendall(struct.pack(">i", 104857600))
        socks.append(s)
    time.sleep(1.0)
    during = snapshot(cluster)["1"]
    served = healthy_ping(cluster)
    for s in socks:
        s.close()
    time.sleep(0.5)
    return {
        "connections": connections,
        "announced_bytes_each": 104857600,
        "rss_growth_mib": round((during["VmRSS"] - before["VmRSS"]) / MiB, 1),
        "healthy_served": all(v["served"] for v in served.values()),
        "healthy": served,
    }


def phase_long_polls(cluster, connections: int, topic: str) -> dict:
    target = _address(cluster, 1)
    before = snapshot(cluster)["1"]["fds"]
    R = API_BY_KEY[K.FETCH].Request
    body = R(
        replica_id=-1,
        max_wait_ms=2**31 - 1,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            R.FetchTopic(
                topic=topic,
                partitions=[
                    R.FetchTopic.FetchPartition(partition=p, fetch_offset=1 << 40, partition_max_bytes=1 << 20)
                    for p in range(3)
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    frame = encode_request(K.FETCH, 12, 1, body, client_id="long-poll", framed=True)
    socks = []
    for _ in range(connections):
        s = socket.create_connection(target, timeout=10)
        s.sendall(frame)
        socks.append(s)
    time.sleep(1.0)
    during = snapshot(cluster)["1"]["fds"]
    for s in socks:
        s.close()
    t0 = time.monotonic()
    after = during
    while time.monotonic() - t0 < 10:
        after = snapshot(cluster)["1"]["fds"]
        if after <= before + 5:
            break
        time.sleep(0.05)
    return {
        "connections": connections,
        "fds_before": before,
        "fds_waiting": during,
        "fds_after_close": after,
        "released_within_s": round(time.monotonic() - t0, 2),
        "released": after <= before + 5,
    }


def phase_oversized_create(cluster) -> dict:
    R = API_BY_KEY[K.CREATE_TOPICS].Request
    out = {}
    for n in (100_000, 22_000):
        body = R(
            topics=[
                R.CreatableTopic(
                    name=f"abuse-huge-{n}", num_partitions=n, replication_factor=1, assignments=[], configs=[]
                )
            ],
            timeout_ms=30000,
            validate_only=False,
        )
        t0 = time.monotonic()
        try:
            resp = call(_address(cluster, 1), K.CREATE_TOPICS, 5, body, timeout=60).topics[0]
            out[str(n)] = {
                "error": ErrorCode(resp.error_code).name,
                "message": resp.error_message,
                "seconds": round(time.monotonic() - t0, 2),
            }
        except OSError as e:
            out[str(n)] = {"error": f"no answer: {e}", "seconds": round(time.monotonic() - t0, 2)}
    CP = API_BY_KEY[K.CREATE_PARTITIONS].Request
    body = CP(
        topics=[CP.CreatePartitionsTopic(name=HEALTHY_TOPIC, count=100_000, assignments=None)],
        timeout_ms=30000,
        validate_only=False,
    )
    resp = call(_address(cluster, 1), K.CREATE_PARTITIONS, 1, body, timeout=60).results[0]
    out["create_partitions_100000"] = {"error": ErrorCode(resp.error_code).name, "message": resp.error_message}
    out["healthy"] = healthy_ping(cluster)
    out["all_registered"] = all(
        v.get("brokers_registered") == sorted(cluster.processes) for v in out["healthy"].values()
    )
    return out


def phase_longest_topic_name(cluster) -> dict:
    from spark_kafkalog.client import AdminClient, Consumer, NewTopic, Producer, TopicPartition

    name = "L" * 249
    out = {"length": len(name)}
    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(name, 1, 1)])
        with Producer(cluster.bootstrap_servers) as p:
            for i in range(100):
                p.send(name, f"old-{i}".encode())
            p.flush()
        admin.delete_topics([name])
        deadline = time.monotonic() + 30
        while name in admin.list_topics() and time.monotonic() < deadline:
            time.sleep(0.2)
        out["deleted"] = name not in admin.list_topics()
        time.sleep(1.0)
        admin.create_topics([NewTopic(name, 1, 1)])
        with Producer(cluster.bootstrap_servers) as p:
            p.send(name, b"new")
            p.flush()
    with Consumer(cluster.bootstrap_servers) as c:
        c.assign([TopicPartition(name, 0)])
        c.seek_to_beginning()
        records = c.poll(timeout_ms=3000)
    out["values_after_recreate"] = [r.value.decode() for r in records]
    return out


def _mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        if op < 0.5 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op < 0.7 and b:
            del b[rng.randrange(len(b)) :]
        elif op < 0.85:
            pos = rng.randrange(len(b) + 1)
            b[pos:pos] = rng.randbytes(rng.randint(1, 16))
        elif len(b) >= 8:
            struct.pack_into(">q", b, 0, rng.choice([0, 2**32, -1, 2**63 - 1]))
    return bytes(b)


def partition_leaders(cluster, topic: str) -> dict[int, int]:
    """partition -> leader broker id, from a Metadata request."""
    M = API_BY_KEY[K.METADATA].Request
    md = call(
        _address(cluster, next(iter(cluster.processes))),
        K.METADATA,
        9,
        M(
            topics=[M.MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        ),
    )
    return {p.partition_index: p.leader_id for p in md.topics[0].partitions}


def phase_legacy_fuzz(cluster, requests: int, seed: int = 10) -> dict:
    """Mutated v0/v1 message sets, each sent to its partition's leader (so the conversion is what answers)."""
    rng = random.Random(seed)
    R = API_BY_KEY[K.PRODUCE].Request
    leaders = partition_leaders(cluster, "abuse-fuzz")
    answered = closed = 0
    codes: dict[str, int] = {}
    for i in range(requests):
        magic = rng.choice([0, 1])
        codec = rng.choice([0, 1, 2, 3])
        now = int(time.time() * 1000)
        inner = b"".join(
            encode_message(j, magic, 0, now, f"k{j}".encode(), f"fuzz-{i}-{j}".encode() * rng.randint(1, 20))
            for j in range(rng.randint(1, 5))
        )
        mset = inner if codec == 0 else encode_message(0, magic, codec, now, None, compress(codec, inner, magic=magic))
        mutated = _mutate(mset, rng)
        version = 0 if magic == 0 else rng.choice([1, 2])
        partition = rng.randrange(3)
        body = R(
            acks=1,
            timeout_ms=5000,
            topic_data=[
                R.TopicProduceData(
                    name="abuse-fuzz",
                    partition_data=[R.TopicProduceData.PartitionProduceData(index=partition, records=mutated)],
                )
            ],
        )
        try:
            resp = call(_address(cluster, leaders[partition]), K.PRODUCE, version, body, timeout=10)
            answered += 1
            code = ErrorCode(resp.responses[0].partition_responses[0].error_code).name
            codes[code] = codes.get(code, 0) + 1
        except (OSError, ConnectionError):
            closed += 1
    return {
        "requests": requests,
        "answered": answered,
        "connection_closed": closed,
        "error_codes": codes,
        "brokers_alive": all(s["alive"] for s in snapshot(cluster).values()),
        "healthy": healthy_ping(cluster),
    }


def phase_garbage_checkpoints(cluster, broker_id: int) -> dict:
    cluster.kill_broker(broker_id)
    log_dir = cluster.broker_dir(broker_id) / "logs"
    if not log_dir.exists():
        log_dir = cluster.broker_dir(broker_id)
    garbage = b"\xff\xfe\x00garbage\x80\x81" * 7
    written = []
    for path in log_dir.rglob("*checkpoint*"):
        if path.is_file():
            path.write_bytes(garbage)
            written.append(str(path.relative_to(log_dir)))
    t0 = time.monotonic()
    cluster.start_broker(broker_id)
    return {
        "broker": broker_id,
        "files_overwritten": len(written),
        "restart_seconds": round(time.monotonic() - t0, 2),
        "healthy": healthy_ping(cluster),
    }


def phase_kill_one(cluster, broker_id: int) -> dict:
    cluster.kill_broker(broker_id)
    t0 = time.monotonic()
    cluster.start_broker(broker_id)
    return {"broker": broker_id, "restart_seconds": round(time.monotonic() - t0, 2), "healthy": healthy_ping(cluster)}


# -- verification ------------------------------------------------------------------------------------
def verify_acked(bootstrap: str, acked: dict[tuple[int, int], bytes]) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    partitions = sorted({p for p, _ in acked})
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "abuse-verify",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    c.assign([TopicPartition(HEALTHY_TOPIC, p, 0) for p in partitions])
    want = {p: max(o for q, o in acked if q == p) for p in partitions}
    seen: dict[tuple[int, int], bytes] = {}
    deadline = time.monotonic() + 120
    done = set()
    while len(done) < len(partitions) and time.monotonic() < deadline:
        for m in c.consume(10000, 1.0):
            if m.error():
                continue
            seen[(m.partition(), m.offset())] = m.value()
            if m.offset() >= want[m.partition()]:
                done.add(m.partition())
    c.close()
    lost = [k for k, v in acked.items() if seen.get(k) != v]
    return {"acknowledged": len(acked), "read_back": len(seen), "lost": len(lost), "lost_examples": lost[:10]}


def peak_rss_mib(phases: dict) -> dict[str, float]:
    """Each broker's peak resident memory (VmHWM) over the phases before the whole-cluster kill."""
    peaks: dict[str, float] = {}
    for outcome in phases.values():
        for broker, status in outcome.get("memory_after", {}).items():
            peaks[broker] = max(peaks.get(broker, 0.0), round(status.get("VmHWM", 0) / MiB, 1))
    return peaks


def run(quick: bool) -> dict:
    connections = 200 if quick else 600
    data_dir = Path(tempfile.mkdtemp(prefix="kafkalog-abuse-"))
    zk_port, base_port = free_port(), free_port()
    while base_port > 60000:
        base_port = free_port()

    def new_cluster() -> EmbeddedCluster:
        return EmbeddedCluster(3, data_dir=data_dir, zookeeper_port=zk_port, base_port=base_port).start()

    result: dict = {"machine": machine_info(["confluent-kafka"]), "quick": quick, "phases": {}}
    cluster = new_cluster()
    from spark_kafkalog.client import AdminClient, NewTopic

    with AdminClient(cluster.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(HEALTHY_TOPIC, 6, 1), NewTopic("abuse-fuzz", 3, 1), NewTopic("abuse-poll", 3, 1)])
    producer = HealthyProducer(cluster.bootstrap_servers)
    producer.start()
    time.sleep(2)
    result["memory_at_start"] = snapshot(cluster)
    phases = [
        ("size_prefixes", lambda c: phase_size_prefixes(c, connections)),
        ("long_polls", lambda c: phase_long_polls(c, connections, "abuse-poll")),
        ("oversized_create", phase_oversized_create),
        ("longest_topic_name", phase_longest_topic_name),
        ("legacy_fuzz", lambda c: phase_legacy_fuzz(c, 300 if quick else 3000)),
        ("garbage_checkpoints", lambda c: phase_garbage_checkpoints(c, 2)),
        ("sigkill_one_broker", lambda c: phase_kill_one(c, 3)),
    ]
    for name, phase in phases:
        t0 = time.time()
        print(f"-- {name}", flush=True)
        try:
            outcome = phase(cluster)
        except Exception as e:  # noqa: BLE001 - a failed phase is a finding, recorded and reported
            outcome = {"failed": f"{type(e).__name__}: {e}"}
        t1 = time.time()
        outcome["seconds"] = round(t1 - t0, 2)
        outcome["healthy_acks_during"] = producer.acks_between(t0, t1)
        outcome["memory_after"] = snapshot(cluster)
        result["phases"][name] = outcome
        print(json.dumps({k: v for k, v in outcome.items() if k not in ("memory_after", "healthy")}), flush=True)

    print("-- sigkill_whole_cluster", flush=True)
    t0 = time.time()
    cluster.kill()
    restart0 = time.monotonic()
    try:
        cluster = new_cluster()
        outcome = {"restart_seconds": round(time.monotonic() - restart0, 2), "healthy": healthy_ping(cluster)}
    except Exception as e:  # noqa: BLE001
        outcome = {"failed": f"{type(e).__name__}: {e}"}
    time.sleep(3)
    outcome["healthy_acks_after_restart"] = producer.acks_between(time.time() - 3, time.time())
    outcome["seconds"] = round(time.time() - t0, 2)
    result["phases"]["sigkill_whole_cluster"] = outcome
    print(json.dumps({k: v for k, v in outcome.items() if k != "healthy"}), flush=True)

    producer.stop_event.set()
    producer.join(120)
    result["producer"] = {"sent": producer.sent, "acknowledged": len(producer.acked), "failed": producer.failed}
    result["verification"] = verify_acked(cluster.bootstrap_servers, producer.acked)
    result["peak_rss_mib"] = peak_rss_mib(result["phases"])
    cluster.stop()
    print(json.dumps(result["verification"]), flush=True)
    return result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer connections and fuzz requests")
    parser.add_argument("--out", default=str(RESULTS / "abuse.json"))
    args = parser.parse_args(argv)
    result = run(args.quick)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return result


if __name__ == "__main__":
    main()
