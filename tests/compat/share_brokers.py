"""Brokers for the share-group scenarios (tests/share_scenarios.py): Apache Kafka 4.4 and kafkalog, one each.

Both get the same share-group settings: ``share.record.lock.duration.ms`` down to ``LOCK_MS`` is a valid group
config (``group.share.min.record.lock.duration.ms``), and ``__share_group_state`` has one replica and few
partitions (one broker). ``share_target`` is parametrized over the two (session-scoped brokers: each starts
once) and yields a ``ShareTarget``; conftest.py exposes these fixtures to the compat modules.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from tests.share_scenarios import LOCK_MS, NewTopic, topic_maker

from .kafka_broker import COMMON_PROPERTIES, KafkaBroker
from .peers import KAFKA_44

SHARE_PROPERTIES = {
    "share.coordinator.state.topic.num.partitions": "4",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.share.min.record.lock.duration.ms": str(min(LOCK_MS, 1000)),
}


@dataclass(frozen=True)
class ShareTarget:
    """A broker under the share-group scenarios: its name (the test parameter), address, and topic maker."""

    name: str
    bootstrap_servers: str
    new_topic: NewTopic


@pytest.fixture(scope="session")
def kafka_share(tmp_path_factory):
    """Apache Kafka 4.4 (KRaft, share.version finalized by default) with SHARE_PROPERTIES."""
    broker = KafkaBroker(KAFKA_44, tmp_path_factory.mktemp("kafka-4.4-share"), extra=SHARE_PROPERTIES)
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def kafkalog_share(zookeeper, tmp_path_factory):
    """One kafkalog broker (in process) with the settings of COMMON_PROPERTIES and SHARE_PROPERTIES."""
    from broker.server import EmbeddedBroker

    keys = ("offsets.topic.replication.factor", "offsets.topic.num.partitions", "group.initial.rebalance.delay.ms")
    overrides: dict[str, Any] = {k: COMMON_PROPERTIES[k] for k in keys} | SHARE_PROPERTIES
    broker = EmbeddedBroker(
        0,
        zookeeper_connect=f"{zookeeper.connect_string}/kafkalog-share-{uuid.uuid4().hex[:8]}",
        log_dir=tmp_path_factory.mktemp("kafkalog-share"),
        transaction_state_log_replication_factor=1,
        **overrides,
    )
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(params=["kafka-4.4", "kafkalog"])
def share_target(request) -> ShareTarget:
    broker = request.getfixturevalue("kafka_share" if request.param == "kafka-4.4" else "kafkalog_share")
    return ShareTarget(request.param, broker.bootstrap_servers, topic_maker(broker.bootstrap_servers))
