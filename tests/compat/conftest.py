"""Compat fixtures: Apache Kafka brokers (3.9 on the session's ZooKeeper, 4.4 KRaft) and a kafkalog broker.

``kafka`` is parametrized over both Kafka versions (session scope: each broker starts once, pytest groups the
tests by version); ``kafkalog`` is one kafkalog broker on the session's ZooKeeper for Kafka's own clients
and tools. A failed test gets the Kafka broker's log tail as a report section; the broker's folder stays in
pytest's tmp dirs (the last three runs are kept).
"""

from __future__ import annotations

import uuid

import pytest

from .kafka_broker import KafkaBroker
from .peers import KAFKA_39, KAFKA_44
from .share_brokers import kafka_share, kafkalog_share, share_target  # noqa: F401 (fixtures)

KAFKA_PEERS = {"kafka-3.9": KAFKA_39, "kafka-4.4": KAFKA_44}


@pytest.fixture(scope="session", params=sorted(KAFKA_PEERS))
def kafka(request, tmp_path_factory):
    """One Apache Kafka broker per version: 3.9.1 registered on the session's ZooKeeper, 4.4.0 in KRaft mode."""
    peer = KAFKA_PEERS[request.param]
    connect = None
    if peer is KAFKA_39:
        zookeeper = request.getfixturevalue("zookeeper")
        connect = f"{zookeeper.connect_string}/kafka39-{uuid.uuid4().hex[:8]}"
    broker = KafkaBroker(peer, tmp_path_factory.mktemp(peer.name), zookeeper_connect=connect)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafkalog(zookeeper, tmp_path_factory):
    """One kafkalog broker (in process) registered on the session's ZooKeeper under its own chroot."""
    from broker.server import EmbeddedBroker

    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/kafkalog-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog"),
        offsets_topic_num_partitions=4,
        offsets_topic_replication_factor=1,
        transaction_state_log_replication_factor=1,
        group_initial_rebalance_delay_ms=0,
    )
    broker.start()
    yield broker
    broker.stop()


def new_topic(bootstrap: str, partitions: int = 1, prefix: str = "compat", **config: str) -> str:
    """A fresh topic made with kafkalog's AdminClient (``config`` keys with ``_`` for ``.``)."""
    from spark_kafkalog.client import AdminClient, NewTopic

    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, {k.replace("_", "."): v for k, v in config.items()})])
    return name


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        broker = getattr(item, "funcargs", {}).get("kafka")
        if isinstance(broker, KafkaBroker):
            report.sections.append((f"Apache Kafka {broker.version} log ({broker.data_dir})", broker.log_tail()))
