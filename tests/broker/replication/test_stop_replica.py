"""A stopping broker stops following first (Kafka's StopReplica), so no leader adds it back to an ISR its
controlled shutdown took it out of (three in-process brokers on one ``memory:`` registry)."""

from __future__ import annotations

import time

from broker.cluster.registry import PartitionState
from tests.waiting import wait_until

from .cluster import Cluster


def test_a_stopping_broker_is_not_added_back_to_the_isrs_it_left(tmp_path_factory):
    c = Cluster(
        3,
        tmp_path_factory,
        replica_lag_time_max_ms=30_000,  # no ISR shrinks by lag during the test
        replica_fetch_wait_max_ms=50,
        controlled_shutdown_max_retries=3,
        controlled_shutdown_retry_backoff_ms=700,
        auto_leader_rebalance_enable=False,
    )
    try:
        c.create_topic("stuck", {0: (2, 0)})  # led by 2; its only other replica does not follow: cannot move
        c.create_topic("followed", {0: (0, 2)})  # broker 2 follows broker 0

        def isr(topic):
            state = c.state(topic)
            return state.isr if state is not None else None

        wait_until(lambda: isr("stuck") == (2, 0) and isr("followed") == (0, 2), 20)
        c.produce(0, "followed", [b"a", b"b"])
        c.pause_fetching(0, "stuck")
        time.sleep(0.5)  # its last Fetch is answered: nothing shows the leader broker 0 catching up again
        st = c.state("stuck")
        c.set_state("stuck", PartitionState(st.leader, st.leader_epoch, (2,), st.controller_epoch, st.zk_version))
        wait_until(lambda: c.partition(2, "stuck").isr == (2,), 10, "the leader to apply the shrunk ISR")

        started = time.monotonic()
        c.stop(2)  # controlled shutdown: three attempts 0.7 s apart, "stuck" stays led by 2
        assert time.monotonic() - started >= 1.0, "the controlled shutdown did not retry"
        assert c.state("followed").isr == (0,), "the stopping broker was added back to the ISR"
    finally:
        c.close()
