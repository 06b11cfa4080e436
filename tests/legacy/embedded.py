"""In-process brokers on the session's real ZooKeeper (a chroot per cluster) for the 0.8 producer and
SimpleConsumer tests, and small helpers around them."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from broker.server import EmbeddedBroker
from spark_kafkalog.client import KafkaClient
from spark_kafkalog.client.network.socket_transport import split_host_port

from ..waiting import wait_until


def start_cluster(zookeeper, tmp_path_factory, n: int = 1, **settings) -> list[EmbeddedBroker]:
    connect = f"{zookeeper.connect_string}/legacy-{uuid.uuid4().hex[:8]}"
    return [
        EmbeddedBroker(
            i, zookeeper_connect=connect, log_dir=tmp_path_factory.mktemp(f"legacy-b{i}"), **settings
        ).start()
        for i in range(n)
    ]


def create_topic(brokers, partitions: int = 1, config: Mapping[str, str] | None = None, name: str = "") -> str:
    """A new topic (replication factor 1) led on every broker's view; returns its name."""
    name = name or f"t-{uuid.uuid4().hex[:8]}"
    b = brokers[0]
    b.call(lambda: b.broker.topic_admin.create_topic(name, partitions, 1, dict(config or {})))
    wait_until(
        lambda: all(s.call(lambda s=s: s.broker.topic_admin.has_leaders(name, partitions)) for s in brokers),
        timeout_s=60,
        what=f"leaders of {name}",
    )
    return name


def leaders(broker: EmbeddedBroker, topic: str) -> dict[int, int]:
    """``{partition: leader broker id}`` from the cluster's metadata."""
    with KafkaClient(broker.bootstrap_servers) as client:
        info = client.topic_info(topic, refresh=True)
        return {p: info.partitions[p].leader for p in sorted(info.partitions)}


def host_port(broker: EmbeddedBroker) -> tuple[str, int]:
    return split_host_port(broker.bootstrap_servers)
