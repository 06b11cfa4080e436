"""A hostile client authenticated as a user without any ACL (``bob``) sends fuzzed requests and changes nothing.

The broker (a process of ``EmbeddedCluster`` on the session's ZooKeeper, authorizing as in ``secured_broker``)
holds topics with records and configs, a group with committed offsets and ACLs for another user. Four connections
send fuzzed requests (``fuzz_requests``: every served API at every served version, bodies built from the APIs'
schemas naming the real topics, groups and principals, half of them mutated byte-wise), each logging in again when
the broker closes it. Meanwhile the admin (a super user) lists topics, reads configs and produces and reads a
record every 0.3 s and must be served every time. Afterwards the cluster state is what it was: the whole ZooKeeper
chroot (topics, partitions, configs, ACLs, quotas, credentials, change notices, pending deletions), every topic's
log end offsets, the groups and their committed offsets. No answer the hostile client decoded leaked anything:
no Metadata topic, fetched record, listed group, committed offset, ACL or config.

The default run sends 5,000 requests; the 100,000-request run is ``slow`` (opt-in: ``pytest -m slow``).
"""

from __future__ import annotations

import random
import socket
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from kazoo.client import KazooClient

from broker.embedded_cluster import EmbeddedCluster
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, decode_response
from spark_kafkalog.security.acl import AclOperation, ResourceType

from .acl_clients import AclSetter, SaslWire, User, acl
from .fuzz_requests import NamePool, RequestFuzzer
from .secured_broker import PASSWORDS, secured_config

pytestmark = pytest.mark.integration

CONNECTIONS = 4
READ_TIMEOUT_S = 3.0
# znodes that change without anyone asking: the live broker's registration and the controller's election
VOLATILE = ("/brokers/ids", "/controller", "/controller_epoch")


@dataclass
class Cluster:
    cluster: EmbeddedCluster
    zookeeper_connect: str
    bootstrap: str
    topics: list[str]
    groups: list[str]
    healthy_topic: str

    def user(self, name: str) -> User:
        return User(self.bootstrap, name, PASSWORDS[name])


@pytest.fixture(scope="module")
def victim(zookeeper, tmp_path_factory):
    """A one-broker cluster holding what the hostile client must not touch."""
    from spark_kafkalog.client import AdminClient, NewTopic, Producer
    from spark_kafkalog.client.admin.group_admin import OffsetAndMetadata
    from spark_kafkalog.client.types import TopicPartition

    connect = f"{zookeeper.connect_string}/hostile-{uuid.uuid4().hex[:8]}"
    admin_conf = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret";',
    }
    cluster = EmbeddedCluster(
        1,
        data_dir=tmp_path_factory.mktemp("hostile"),
        zookeeper_connect=connect,
        broker_config=secured_config(listeners="SASL_PLAINTEXT://{host}:{port},INTERNAL://{host}:{port1}"),
        client_config=admin_conf,
    )
    cluster.start()
    try:
        bootstrap = f"{cluster.host}:{cluster.ports[cluster.broker_ids[0]]}"
        suffix = uuid.uuid4().hex[:6]
        topics = [f"victim-{suffix}-{i}" for i in range(3)]
        groups = [f"victim-group-{suffix}"]
        state = Cluster(cluster, connect, bootstrap, topics, groups, f"healthy-{suffix}")
        admin = state.user("admin")
        with AdminClient(admin.kafka_names()) as client:
            client.create_topics(
                [NewTopic(t, 2, 1, {"retention.ms": "86400000"}) for t in topics]
                + [NewTopic(state.healthy_topic, 1, 1)]
            )
            with Producer(admin.kafka_names(), acks="all") as producer:
                for t in topics:
                    for i in range(10):
                        producer.send(t, b"secret-%d" % i, partition=i % 2)
                producer.flush(30)
            client.alter_group_offsets(groups[0], {TopicPartition(topics[0], 0): OffsetAndMetadata(3, "m")})
        AclSetter(admin).add(
            acl("User:alice", AclOperation.READ, ResourceType.TOPIC, topics[0]),
            acl("User:alice", AclOperation.READ, ResourceType.GROUP, groups[0]),
        )
        yield state
    finally:
        cluster.stop()


# -- the state that must not change ---------------------------------------------------------------------------


def zookeeper_tree(connect: str) -> dict[str, bytes]:
    """Every znode under the chroot with its data, but the volatile ones."""
    zk = KazooClient(hosts=connect)
    zk.start(timeout=15)
    try:
        tree: dict[str, bytes] = {}

        def walk(path: str) -> None:
            if any(path == v or path.startswith(v + "/") for v in VOLATILE):
                return
            data, _stat = zk.get(path)
            tree[path] = data
            for child in zk.get_children(path):
                walk(f"{path.rstrip('/')}/{child}")

        walk("/")
        return tree
    finally:
        zk.stop()
        zk.close()


def client_state(state: Cluster) -> dict[str, Any]:
    """What the admin reads: topics and their partitions, end offsets, groups and committed offsets."""
    from spark_kafkalog.client import AdminClient, KafkaClient, OffsetSpec, TopicPartition

    admin = state.user("admin").kafka_names()
    out: dict[str, Any] = {}
    with AdminClient(admin) as client:
        topics = sorted(client.list_topics(include_internal=True))
        out["topics"] = topics
        out["partitions"] = {name: len(d.partitions) for name, d in client.describe_topics(topics).items()}
        out["groups"] = sorted(g.group_id for g in client.list_groups())
        out["offsets"] = {g: sorted(client.list_group_offsets(g).items()) for g in out["groups"]}
        out["configs"] = {t: client.describe_configs(t) for t in state.topics}
    with KafkaClient(admin) as client:
        tps = [TopicPartition(t, p) for t in state.topics for p in range(out["partitions"][t])]
        out["end_offsets"] = sorted(client.list_offsets({tp: OffsetSpec.LATEST for tp in tps}).items())
    return out


# -- leaks in the answers ------------------------------------------------------------------------------------


def leaks(api_key: int, response: Any, real_topics: set[str]) -> list[str]:
    """What an answer to the hostile user revealed that it may not see (empty: nothing)."""
    found: list[str] = []
    if api_key == ApiKey.METADATA:
        found += [f"Metadata shows {t.name}" for t in response.topics if t.error_code == 0 and t.name in real_topics]
    elif api_key == ApiKey.FETCH:
        for t in response.responses:
            for p in t.partitions:
                if p.error_code == 0 and p.records:
                    found.append(f"Fetch returned {len(p.records)} bytes of records")
    elif api_key == ApiKey.LIST_GROUPS:
        found += [f"ListGroups shows {g.group_id}" for g in response.groups]
    elif api_key == ApiKey.OFFSET_FETCH:
        for t in getattr(response, "topics", []) or []:
            found += [f"OffsetFetch shows {t.name}" for p in t.partitions if p.committed_offset >= 0]
        for g in getattr(response, "groups", []) or []:
            for t in g.topics:
                found += [f"OffsetFetch shows {t.name}" for p in t.partitions if p.committed_offset >= 0]
    elif api_key == ApiKey.DESCRIBE_ACLS:
        if response.error_code == 0 and response.resources:
            found.append(f"DescribeAcls listed {len(response.resources)} resources")
    elif api_key == ApiKey.DESCRIBE_CONFIGS:
        found += [
            f"DescribeConfigs of {r.resource_name}"
            for r in response.results
            if r.error_code == 0 and r.resource_name in real_topics and r.configs
        ]
    elif api_key == ApiKey.LIST_OFFSETS:
        for t in response.topics:
            found += [f"ListOffsets of {t.name}" for p in t.partitions if p.error_code == 0 and t.name in real_topics]
    elif api_key == ApiKey.DESCRIBE_LOG_DIRS:
        found += [f"DescribeLogDirs shows {r.log_dir}" for r in response.results]
    elif api_key == ApiKey.LIST_TRANSACTIONS:
        found += [f"ListTransactions shows {s.transactional_id}" for s in response.transaction_states]
    elif api_key == ApiKey.DESCRIBE_GROUPS:
        found += [f"DescribeGroups shows {g.group_id}'s members" for g in response.groups if g.members]
    return found


# -- the hostile connections ----------------------------------------------------------------------------------


@dataclass
class Tally:
    sent: int = 0
    answered: int = 0
    undecodable: int = 0
    closed: int = 0
    timeouts: int = 0
    logins: int = 0
    error_codes: dict[int, int] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)
    failure: BaseException | None = None


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed by the broker")
        buf += chunk
    return bytes(buf)


def hostile_connection(user: User, fuzzer: RequestFuzzer, requests: int, real: set[str], tally: Tally) -> None:
    wire: SaslWire | None = None
    try:
        while tally.sent < requests:
            if wire is None:
                wire = SaslWire(user, timeout=READ_TIMEOUT_S)
                tally.logins += 1
            key, version, cid, frame = fuzzer.next()
            tally.sent += 1
            try:
                wire.sock.sendall(frame)
                size = struct.unpack(">i", _read_exact(wire.sock, 4))[0]
                payload = _read_exact(wire.sock, size)
            except TimeoutError:
                tally.timeouts += 1
                wire.close()
                wire = None
                continue
            except OSError:  # closed (ConnectionError) or reset
                tally.closed += 1
                wire.close()
                wire = None
                continue
            tally.answered += 1
            try:
                got, response = decode_response(key, version, payload)
            except Exception:
                tally.undecodable += 1
                continue
            assert got == cid, f"answer to correlation id {got}, expected {cid}"
            code = getattr(response, "error_code", None)
            if isinstance(code, int):
                tally.error_codes[code] = tally.error_codes.get(code, 0) + 1
            tally.leaks += [f"{API_BY_KEY[key].name} v{version}: {x}" for x in leaks(key, response, real)]
    except BaseException as exc:
        tally.failure = exc
    finally:
        if wire is not None:
            wire.close()


class HealthyAdmin(threading.Thread):
    """The admin's round every 0.3 s: list topics, read a topic's configs, produce a record and read it back."""

    def __init__(self, state: Cluster) -> None:
        super().__init__(daemon=True, name="healthy-admin")
        self.state = state
        self.stop = threading.Event()
        self.rounds: list[float] = []
        self.failures: list[str] = []

    def run(self) -> None:
        from spark_kafkalog.client import AdminClient, KafkaClient, OffsetSpec, Producer, TopicPartition

        conf = {**self.state.user("admin").kafka_names(), "request.timeout.ms": 10000}
        tp = TopicPartition(self.state.healthy_topic, 0)
        with (
            AdminClient(conf) as admin,
            Producer({**conf, "acks": "all", "enable.idempotence": False}) as producer,
            KafkaClient(conf) as reader,
        ):
            while not self.stop.wait(0.3):
                started = time.monotonic()
                try:
                    assert set(self.state.topics) <= set(admin.list_topics())
                    assert admin.describe_configs(self.state.topics[0])["retention.ms"] == "86400000"
                    value = uuid.uuid4().bytes
                    offset = producer.send(tp.topic, value, partition=0).result(10).offset
                    end = reader.list_offsets({tp: OffsetSpec.LATEST})[tp]
                    got = [r.value for f in reader.fetch_batches(tp, offset, end) for r in f.batch.records()]
                    assert value in got, f"the record at {offset} did not read back"
                    self.rounds.append(time.monotonic() - started)
                except Exception as exc:
                    self.failures.append(f"{type(exc).__name__}: {exc}")


def run_hostile(state: Cluster, requests: int, seed: int) -> tuple[list[Tally], HealthyAdmin, float]:
    with SaslWire(state.user("bob")) as wire:
        versions = wire.call(ApiKey.API_VERSIONS, 3, client_software_name="hostile", client_software_version="1")
    served = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
    names = NamePool(topics=list(state.topics) + ["__consumer_offsets"], groups=list(state.groups))
    real = set(state.topics) | {"__consumer_offsets", "__transaction_state", state.healthy_topic}
    tallies = [Tally() for _ in range(CONNECTIONS)]
    threads = [
        threading.Thread(
            target=hostile_connection,
            args=(
                state.user("bob"),
                RequestFuzzer(random.Random(seed + i), served, names),
                requests // CONNECTIONS,
                real,
                tallies[i],
            ),
            name=f"hostile-{i}",
            daemon=True,
        )
        for i in range(CONNECTIONS)
    ]
    healthy = HealthyAdmin(state)
    healthy.start()
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    healthy.stop.set()
    healthy.join(30)
    return tallies, healthy, elapsed


def check_hostile_run(state: Cluster, requests: int, seed: int) -> None:
    zk_before, clients_before = zookeeper_tree(state.zookeeper_connect), client_state(state)
    tallies, healthy, elapsed = run_hostile(state, requests, seed)
    summary = {
        "elapsed_s": round(elapsed, 1),
        "sent": sum(t.sent for t in tallies),
        "answered": sum(t.answered for t in tallies),
        "closed": sum(t.closed for t in tallies),
        "timeouts": sum(t.timeouts for t in tallies),
        "logins": sum(t.logins for t in tallies),
    }
    assert all(t.failure is None for t in tallies), [repr(t.failure) for t in tallies if t.failure] + [summary]
    assert summary["sent"] >= requests - CONNECTIONS, summary
    assert summary["answered"] > requests // 4, f"the broker answered too few requests: {summary}"
    assert not healthy.failures, f"the admin was not served: {healthy.failures[:5]} ({summary})"
    assert len(healthy.rounds) >= max(3, int(elapsed / 2)), f"only {len(healthy.rounds)} admin rounds: {summary}"
    assert max(healthy.rounds) < 10, f"an admin round took {max(healthy.rounds):.1f} s"
    leaked = [x for t in tallies for x in t.leaks]
    assert not leaked, leaked[:10]
    zk_after, clients_after = zookeeper_tree(state.zookeeper_connect), client_state(state)
    added = sorted(set(zk_after) - set(zk_before))
    removed = sorted(set(zk_before) - set(zk_after))
    changed = sorted(p for p in set(zk_before) & set(zk_after) if zk_before[p] != zk_after[p])
    assert (added, removed, changed) == ([], [], []), {"added": added, "removed": removed, "changed": changed}
    assert clients_after == clients_before


def test_hostile_client_changes_and_reads_nothing_under_5000_fuzzed_requests(victim):
    check_hostile_run(victim, 5_000, seed=27)


@pytest.mark.slow
def test_hostile_client_changes_and_reads_nothing_under_100000_fuzzed_requests(victim):
    check_hostile_run(victim, 100_000, seed=2700)
