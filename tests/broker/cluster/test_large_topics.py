"""Huge CreateTopics / CreatePartitions against a real ZooKeeper: refused before anything is written when over
the limits (no znode, no directory, the session untouched), and a large allowed request (thousands of
partitions) succeeds without the session dropping while the broker's descriptors stay bounded."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from broker.server import EmbeddedBroker
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from ..wire import Wire

pytestmark = pytest.mark.integration

K = ApiKey
CT = API_BY_KEY[K.CREATE_TOPICS].Request
CP = API_BY_KEY[K.CREATE_PARTITIONS].Request
MD = API_BY_KEY[K.METADATA].Request


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def start_broker(zk_connect, tmp_path):
    started = []

    def start(**overrides) -> EmbeddedBroker:
        b = EmbeddedBroker(0, zookeeper_connect=zk_connect, log_dir=tmp_path / "logs", **overrides).start()
        started.append(b)
        return b

    yield start
    for b in started:
        b.stop()


class Raw:
    """A plain kazoo client on the server root, reading paths under the test's chroot."""

    def __init__(self, zookeeper, zk_connect: str) -> None:
        self.chroot = "/" + zk_connect.split("/", 1)[1]
        self.client = KazooClient(hosts=zookeeper.connect_string)
        self.client.start(timeout=10)

    def exists(self, path: str):
        return self.client.exists(self.chroot + path)


@pytest.fixture
def raw(zookeeper, zk_connect):
    r = Raw(zookeeper, zk_connect)
    yield r
    r.client.stop()
    r.client.close()


def create(b: EmbeddedBroker, name: str, partitions: int, timeout_ms: int = 120_000):
    body = CT(
        topics=[
            CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=-1, assignments=[], configs=[])
        ],
        timeout_ms=timeout_ms,
        validate_only=False,
    )
    with Wire(b.bootstrap_servers, timeout=timeout_ms / 1000 + 30) as w:
        return w.call(K.CREATE_TOPICS, 7, body).topics[0]


def registration_intact(b: EmbeddedBroker, raw: Raw, session_id: int) -> bool:
    stat = raw.exists("/brokers/ids/0")
    return stat is not None and stat.ephemeralOwner == session_id == b.broker.registry.session_id


def nothing_created(b: EmbeddedBroker, raw: Raw, name: str) -> bool:
    dirs = [p for d in b.config.log_dirs for p in Path(d).glob(f"{name}-*")]
    return raw.exists(f"/brokers/topics/{name}") is None and raw.exists(f"/config/topics/{name}") is None and not dirs


def test_a_hundred_thousand_partitions_are_refused_before_zookeeper_is_touched(start_broker, raw):
    b = start_broker()
    session = b.broker.registry.session_id
    name = f"huge-{uuid.uuid4().hex[:8]}"
    res = create(b, name, 100_000)
    assert res.error_code == ErrorCode.INVALID_PARTITIONS
    assert "100000 new partitions" in res.error_message and "max.partitions.per.request=5000" in res.error_message
    assert nothing_created(b, raw, name) and registration_intact(b, raw, session)
    assert create(b, f"after-{uuid.uuid4().hex[:8]}", 2).error_code == 0


def test_with_the_limits_raised_an_assignment_too_large_for_one_zookeeper_request_is_refused(start_broker, raw):
    b = start_broker(max_partitions_per_request=200_000, max_broker_partitions=200_000)
    session = b.broker.registry.session_id
    name = f"huge-{uuid.uuid4().hex[:8]}"
    res = create(b, name, 100_000)  # about 1.2 MB of assignment JSON: more than ZooKeeper's jute.maxbuffer
    assert res.error_code == ErrorCode.POLICY_VIOLATION
    assert "bytes in ZooKeeper" in res.error_message
    assert nothing_created(b, raw, name) and registration_intact(b, raw, session)


def test_thousands_of_partitions_are_created_with_the_session_kept_and_descriptors_bounded(start_broker, raw):
    b = start_broker()
    session = b.broker.registry.session_id
    before = open_fds()
    name = f"large-{uuid.uuid4().hex[:8]}"
    res = create(b, name, 2000)
    assert (res.error_code, res.error_message, res.num_partitions) == (0, None, 2000)
    with Wire(b.bootstrap_servers, timeout=150) as w:
        t = CP.CreatePartitionsTopic(name=name, count=3000, assignments=None)
        grown = w.call(K.CREATE_PARTITIONS, 3, topics=[t], timeout_ms=120_000, validate_only=False).results[0]
        assert (grown.error_code, grown.error_message) == (0, None)
        meta = w.call(K.METADATA, 12, topics=[MD.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    partitions = meta.topics[0].partitions
    assert len(partitions) == 3000 and all(p.leader_id == 0 and p.error_code == 0 for p in partitions)
    assert len([p for d in b.config.log_dirs for p in Path(d).glob(f"{name}-*")]) == 3000
    assert registration_intact(b, raw, session)
    assert open_fds() - before < 50  # was one descriptor per partition (3000)
