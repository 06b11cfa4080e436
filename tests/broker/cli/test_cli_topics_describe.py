"""``kafkalog topics describe --under-replicated-partitions / --unavailable-partitions`` against an
in-process broker; replicas on broker 7, which never starts, make partitions under-replicated or offline."""

from __future__ import annotations

from broker.cli import main
from broker.cluster.registry import TopicAssignment
from tests.waiting import wait_until

from ..conftest import start_brokers


def test_describe_lists_under_replicated_and_unavailable_partitions(tmp_path_factory, capsys):
    (b,) = start_brokers(1, tmp_path_factory)
    try:
        reg = b.broker.registry
        reg.create_topic(TopicAssignment("half", {0: (0, 7), 1: (0,)}), {})
        reg.create_topic(TopicAssignment("gone", {0: (7,)}), {})
        wait_until(lambda: {"half", "gone"} <= set(b.broker.metadata.topics) and len(reg.partition_states("half")) == 2)
        wait_until(lambda: len(reg.partition_states("gone")) == 1)
        server = b.bootstrap_servers

        def describe(*flags):
            capsys.readouterr()
            assert main(["topics", "describe", "--bootstrap-server", server, *flags]) == 0
            return capsys.readouterr().out

        under = describe("--under-replicated-partitions")
        assert "Topic: half\tPartition: 0\tLeader: 0\tReplicas: 0,7\tIsr: 0" in under
        assert "Partition: 1" not in under and "gone" not in under  # gone: leaderless, but its ISR is complete
        unavailable = describe("--unavailable-partitions")
        assert "Topic: gone\tPartition: 0\tLeader: none\tReplicas: 7" in unavailable and "half" not in unavailable
        both = describe("--under-replicated-partitions", "--unavailable-partitions", "--topic", "half")
        assert both.count("Topic: half") == 1 and "PartitionCount" not in both
        assert "PartitionCount: 2" in describe("--topic", "half")
    finally:
        b.stop()
