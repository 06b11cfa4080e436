"""What the replica manager reports to ``broker.metrics``: ``replica_figures`` (size, offsets and role of each
local replica) and the ISR changes it makes as leader, counted in the ``BrokerMetrics`` it was given."""

from __future__ import annotations

import asyncio

from broker.cluster.registry import PartitionState, TopicAssignment
from broker.metrics import ReplicaFigures
from spark_kafkalog.records import RecordBatchBuilder

from ..services_builder import build_services


def records(n: int) -> bytes:
    b = RecordBatchBuilder()
    for i in range(n):
        b.append(1_700_000_000_000 + i, None, b"v%d" % i)
    return b.build()


def test_replica_figures_report_each_local_replica_with_its_role(tmp_path):
    services = build_services(tmp_path, broker_id=0)
    rm = services.replica_manager
    replicas = {0: (0,), 1: (0, 1), 2: (1, 0), 3: (1, 2)}
    states = {
        0: PartitionState(0, 0, (0,), 1),  # led here, the whole ISR
        1: PartitionState(0, 0, (0,), 1),  # led here, replica 1 out of the ISR: under-replicated
        2: PartitionState(1, 0, (1, 0), 1),  # followed here
        3: PartitionState(1, 0, (1, 2), 1),  # not hosted here
    }
    rm.apply_topic("t", replicas, states, services.log_config_for({}))
    sizes = {}
    for p, n in ((0, 3), (1, 2)):
        batch = records(n)
        rm.get_partition("t", p).append_as_leader(batch, required_acks=1)
        sizes[p] = len(batch)
    figures = sorted(rm.replica_figures(), key=lambda f: f.partition)
    assert figures == [
        ReplicaFigures("t", 0, sizes[0], 1, 0, 3, 3, is_leader=True, under_replicated=False),
        ReplicaFigures("t", 1, sizes[1], 1, 0, 2, 2, is_leader=True, under_replicated=True),
        ReplicaFigures("t", 2, 0, 1, 0, 0, 0, is_leader=False, under_replicated=False),
    ]


def test_an_isr_expansion_the_leader_writes_is_counted_in_its_metrics(tmp_path):
    services = build_services(tmp_path, broker_id=0)
    rm, registry = services.replica_manager, services.registry

    async def main():
        registry.start()
        registry.create_topic(TopicAssignment("t", {0: (0, 1)}), {})
        state = registry.create_partition_state("t", 0, PartitionState(0, 0, (0,), 1))
        rm.apply_topic("t", {0: (0, 1)}, {0: state}, services.log_config_for({}))
        part = rm.get_partition("t", 0)
        part.update_follower_fetch(1, 0, rm.now_ms())  # follower 1 is at the (empty) log's end
        rm.maybe_expand_isr(part, 1)
        await rm.stop()  # waits for the ISR write
        return part.isr, registry.partition_state("t", 0).isr

    try:
        assert asyncio.run(main()) == ((0, 1), (0, 1))
    finally:
        registry.close()
    assert services.metrics.registry.get_sample_value("kafka_server_replicamanager_isrexpands_total") == 1
    assert services.metrics.registry.get_sample_value("kafka_server_replicamanager_isrshrinks_total") == 0
