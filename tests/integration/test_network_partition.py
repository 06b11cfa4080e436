"""Network partitions, not process deaths: three brokers as hosts in network namespaces (see ``netns``), one
host's link cut and healed again.

ZooKeeper runs in the root namespace on the bridge address, so a cut host loses ZooKeeper and the other brokers
at once. First the host of the controller and leader of two topics is cut while a producer on that host keeps
sending acks=all. The isolated leader must acknowledge none of those writes - with ``min.insync.replicas=2``
because its followers stopped fetching, and with ``min.insync.replicas=1`` too, since shrinking the ISR to
itself needs a ZooKeeper write it cannot make - and a consumer on that host must see only what was committed
before the cut, while the majority side, once the isolated broker's session expires
(``zookeeper.session.timeout.ms`` 4 s), elects a controller and leaders from the ISR and acknowledges new
writes. When the link comes back, the old leader must truncate what it appended alone, catch up and rejoin the
ISR, and every acknowledged record (from before the cut and from the majority side) must be there exactly
once, at the offset it was acknowledged at. Then a follower is cut: the leader must drop it from the ISR after
``replica.lag.time.max.ms`` and go on acknowledging, and the follower must catch up after the heal.

Needs root for ``ip netns``; skipped with ``ip``'s error where namespaces cannot be made.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.embedded_cluster import READY_PREFIX
from broker.processes import death_signal_preexec
from spark_kafkalog.records import decode_batch_records, iter_batches
from tests.waiting import wait_until

from .host_clients import produce_acks_all
from .netns import NetnsUnavailable, Network

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BROKERS = (1, 2, 3)
PORT = 9092
SESSION_MS = 4000
LAG_MS = 3000
START_TIMEOUT_S = 60
ISOLATED_DELIVERY_MS = 12_000  # the isolated producer gives up after this: past the session expiry and the lag time


@dataclass
class Site:
    """The network, ZooKeeper (root namespace, on the bridge address) and one broker process per host."""

    net: Network
    data_dir: Path
    zookeeper: object = None
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)

    def host(self, broker_id: int) -> str:
        return f"b{broker_id}"

    def address(self, broker_id: int) -> str:
        return f"{self.net.hosts[self.host(broker_id)].address}:{PORT}"

    def bootstrap(self, *broker_ids: int) -> str:
        return ",".join(self.address(b) for b in broker_ids or BROKERS)

    def log_dir(self, broker_id: int) -> Path:
        return self.data_dir / f"broker-{broker_id}" / "logs"

    def launch(self, broker_id: int) -> None:
        d = self.data_dir / f"broker-{broker_id}"
        d.mkdir(parents=True, exist_ok=True)
        props = {
            "broker.id": broker_id,
            "listeners": f"PLAINTEXT://{self.address(broker_id)}",
            "log.dirs": self.log_dir(broker_id),
            "zookeeper.connect": self.zookeeper.connect_string,
            "zookeeper.session.timeout.ms": SESSION_MS,
            "replica.lag.time.max.ms": LAG_MS,
            "controlled.shutdown.enable": "false",
        }
        cfg = d / "server.properties"
        cfg.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        with open(d / "broker.log", "ab") as log:
            self.processes[broker_id] = self.net.popen(
                self.host(broker_id),
                [sys.executable, "-m", "broker.cli", "broker", "start", "--config", str(cfg)],
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                cwd=REPO,
                preexec_fn=death_signal_preexec(os.getpid()),
            )

    def await_ready(self, broker_id: int) -> None:
        proc = self.processes[broker_id]
        deadline = time.monotonic() + START_TIMEOUT_S
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline and proc.poll() is None:
                if sel.select(timeout=0.2):
                    line = proc.stdout.readline().decode(errors="replace")
                    if line.startswith(READY_PREFIX):
                        return
                    if not line:
                        break
        log = (self.data_dir / f"broker-{broker_id}" / "broker.log").read_text(errors="replace")
        raise AssertionError(f"broker {broker_id} did not start (exit {proc.poll()}):\n{log[-3000:]}")

    def close(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
        for proc in self.processes.values():
            proc.wait()
            if proc.stdout:
                proc.stdout.close()
        if self.zookeeper is not None:
            self.zookeeper.stop()
        self.net.close()


@pytest.fixture()
def site(tmp_path):
    from broker.cluster.zookeeper_server import ZooKeeperServer

    try:
        net = Network.create([f"b{b}" for b in BROKERS])
    except NetnsUnavailable as e:
        print(f"network partition test skipped: {e}")
        pytest.skip(f"network namespaces cannot be created here: {e}")
    s = Site(net, tmp_path)
    try:
        s.zookeeper = ZooKeeperServer(tmp_path / "zookeeper", host=net.gateway, tick_time_ms=200, force_sync=False)
        s.zookeeper.start()
        for b in BROKERS:
            s.launch(b)
        for b in BROKERS:
            s.await_ready(b)
        yield s
    finally:
        s.close()


@pytest.fixture()
def zk(site):
    client = KazooClient(hosts=site.zookeeper.connect_string, timeout=10)
    client.start(10)
    yield client
    client.stop()
    client.close()


def partition_state(zk: KazooClient, topic: str) -> dict:
    return json.loads(zk.get(f"/brokers/topics/{topic}/partitions/0/state")[0])


def has_leader_and_isr(zk: KazooClient, topic: str, leader: int, isr: list[int]) -> bool:
    if not zk.exists(f"/brokers/topics/{topic}/partitions/0/state"):
        return False
    state = partition_state(zk, topic)
    return state["leader"] == leader and sorted(state["isr"]) == isr


def create_topic(site: Site, min_insync: int, replicas: list[int]) -> str:
    """One partition on ``replicas``, the first one leading."""
    from spark_kafkalog.client import AdminClient, NewTopic

    name = f"split-{min_insync}-{uuid.uuid4().hex[:6]}"
    with AdminClient(site.bootstrap()) as admin:
        admin.create_topics(
            [NewTopic(name, config={"min.insync.replicas": str(min_insync)}, replica_assignment={0: replicas})]
        )
    return name


def replica_batches(site: Site, broker_id: int, topic: str) -> list[bytes]:
    """The batches of a broker's replica as stored in its segment files (written with pwrite: current)."""
    out = []
    for segment in sorted((site.log_dir(broker_id) / f"{topic}-0").glob("*.log")):
        out += [bytes(b.data) for b in iter_batches(segment.read_bytes())]
    return out


def replica_records(site: Site, broker_id: int, topic: str) -> list[tuple[int, bytes]]:
    return [
        (r.offset, r.value) for batch in replica_batches(site, broker_id, topic) for r in decode_batch_records(batch)
    ]


def replicas_agree(site: Site, topic: str) -> bool:
    first = replica_batches(site, BROKERS[0], topic)
    return all(replica_batches(site, b, topic) == first for b in BROKERS[1:])


def consume_all(bootstrap: str, topic: str) -> list[tuple[int, bytes]]:
    """Every record of partition 0 up to its end offset, read by kafka-python (a third-party client)."""
    from kafka import KafkaConsumer, TopicPartition

    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        got: list[tuple[int, bytes]] = []

        def caught_up() -> bool:
            if consumer.position(tp) >= end:
                return True
            for records in consumer.poll(timeout_ms=500).values():
                got.extend((r.offset, r.value) for r in records)
            return False

        wait_until(caught_up, 30, f"kafka-python to read {topic}-0 up to {end}")
        return got
    finally:
        consumer.close()


def values(prefix: str, n: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(n)]


def test_an_isolated_leader_acknowledges_no_acks_all_write_and_nothing_acknowledged_is_lost_when_the_cut_heals(
    site, zk
):
    # the broker to cut off is the controller and the leader of both topics: the majority side must elect both anew
    victim = wait_until(lambda: zk.exists("/controller") and json.loads(zk.get("/controller")[0])["brokerid"], 30)
    majority = [b for b in BROKERS if b != victim]
    topics = [create_topic(site, n, [victim, *majority]) for n in (2, 1)]  # min.insync.replicas 2 and 1
    wait_until(
        lambda: all(has_leader_and_isr(zk, t, victim, list(BROKERS)) for t in topics),
        30,
        f"broker {victim} leading both topics with ISR {list(BROKERS)}",
    )
    epoch_before = {t: partition_state(zk, t)["leader_epoch"] for t in topics}
    acked: dict[str, dict[bytes, int]] = {}
    for t in topics:
        outcome = produce_acks_all(site.bootstrap(), t, values("before", 30), idempotent=True)
        assert all(isinstance(o, int) for o in outcome.values()), outcome
        acked[t] = dict(outcome)
    wait_until(lambda: all(replicas_agree(site, t) for t in topics), 30, "followers caught up before the cut")

    site.net.cut(site.host(victim))
    isolated = {
        t: site.net.popen(
            site.host(victim),
            [
                sys.executable,
                "-m",
                "tests.integration.host_clients",
                "produce",
                site.address(victim),
                t,
                "isolated",
                "20",
                "--delivery-timeout-ms",
                str(ISOLATED_DELIVERY_MS),
                "--request-timeout-ms",
                "4000",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for t in topics
    }
    try:
        # the majority side: once the victim's session expires, a controller elected there moves leadership to
        # another ISR member and takes the victim out of the ISR
        wait_until(
            lambda: all(partition_state(zk, t)["leader"] in majority for t in topics),
            SESSION_MS / 1000 * 6,
            "a leader elected on the majority side",
        )
        assert json.loads(zk.get("/controller")[0])["brokerid"] in majority
        for t in topics:
            state = partition_state(zk, t)
            assert state["leader_epoch"] > epoch_before[t] and victim not in state["isr"], state
            outcome = produce_acks_all(site.bootstrap(*majority), t, values("majority", 30), idempotent=True)
            assert all(isinstance(o, int) for o in outcome.values()), outcome
            acked[t].update(outcome)

        reports = {t: p.communicate(timeout=ISOLATED_DELIVERY_MS / 1000 + 60) for t, p in isolated.items()}
    finally:
        for p in isolated.values():
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
    for t, (out, err) in reports.items():
        results = [json.loads(line) for line in out.splitlines()]
        assert len(results) == 20, f"isolated producer on {t}: stdout {out!r}, stderr {err[-2000:]!r}"
        assert [r for r in results if "offset" in r] == [], f"the isolated leader acknowledged acks=all writes to {t}"
        # the writes did reach the isolated leader: it appended them (uncommitted) to its own log
        assert any(v.startswith(b"isolated-") for _, v in replica_records(site, victim, t)), t

    # and a consumer on the isolated host sees only what was committed before the cut (the high watermark stayed)
    for t in topics:
        seen = site.net.run(
            site.host(victim),
            [sys.executable, "-m", "tests.integration.host_clients", "consume", site.address(victim), t],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=90,
        )
        report = json.loads(seen.stdout or "{}")
        assert "records" in report, f"consumer on the isolated host: {seen.stdout!r} {seen.stderr[-2000:]!r}"
        before = sorted((offset, value) for value, offset in acked[t].items() if value.startswith(b"before-"))
        assert [(o, v.encode()) for o, v in report["records"]] == before

    site.net.heal(site.host(victim))
    wait_until(
        lambda: all(sorted(partition_state(zk, t)["isr"]) == list(BROKERS) and replicas_agree(site, t) for t in topics),
        60,
        f"broker {victim} truncated, caught up and back in the ISR with a log identical to the others'",
    )
    for t in topics:
        records = replica_records(site, victim, t)
        assert not [v for _, v in records if v.startswith(b"isolated-")], "the old leader kept unreplicated records"
        expected = sorted((offset, value) for value, offset in acked[t].items())
        assert records == expected  # every acknowledged record exactly once, at its acknowledged offset
        assert consume_all(site.bootstrap(), t) == expected


def test_a_cut_off_follower_leaves_the_isr_so_acks_all_writes_go_on_and_it_catches_up_when_the_cut_heals(site, zk):
    controller = wait_until(lambda: zk.exists("/controller") and json.loads(zk.get("/controller")[0])["brokerid"], 30)
    leader, follower = [b for b in BROKERS if b != controller]  # neither the controller nor the leader is cut
    topic = create_topic(site, 2, [leader, follower, controller])
    wait_until(lambda: has_leader_and_isr(zk, topic, leader, list(BROKERS)), 30, "the topic's leader and full ISR")
    before = produce_acks_all(site.bootstrap(), topic, values("before", 30), idempotent=True)
    assert all(isinstance(o, int) for o in before.values()), before
    wait_until(lambda: replicas_agree(site, topic), 30, "followers caught up before the cut")

    site.net.cut(site.host(follower))
    cut_at = time.monotonic()
    # the leader waits for the silent follower until replica.lag.time.max.ms, then drops it from the ISR
    # (min.insync.replicas=2 still holds with the other two) and acknowledges
    during = produce_acks_all(site.bootstrap(leader, controller), topic, values("during", 30), idempotent=True)
    assert all(isinstance(o, int) for o in during.values()), during
    assert time.monotonic() - cut_at >= LAG_MS / 1000 * 0.9  # not before the follower was out of sync
    state = partition_state(zk, topic)
    assert state["leader"] == leader and sorted(state["isr"]) == sorted([leader, controller]), state
    assert len(replica_records(site, follower, topic)) == 30  # nothing reached it

    site.net.heal(site.host(follower))
    wait_until(
        lambda: sorted(partition_state(zk, topic)["isr"]) == list(BROKERS) and replicas_agree(site, topic),
        60,
        f"broker {follower} caught up and back in the ISR",
    )
    expected = sorted((offset, value) for value, offset in (before | during).items())
    assert replica_records(site, follower, topic) == expected
    assert consume_all(site.bootstrap(), topic) == expected
