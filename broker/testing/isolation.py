"""Undoing what a test did to a broker or cluster that later tests share: injected faults, brokers taken down.

``restore_broker`` and ``restore_cluster`` are called by the pytest plugin after each test (and before it
deletes a test's topics); both are idempotent and cheap when nothing was changed. Partition leadership moved
by a test (``move_leader``, ``pin_coordinator``) is left as it is: it is a state of the cluster, not a fault.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from broker.embedded_cluster import EmbeddedCluster
    from broker.server import EmbeddedBroker

__all__ = ["restore_broker", "restore_cluster"]


def restore_broker(broker: EmbeddedBroker) -> None:
    """Bring a broker taken ``down()`` back ``up()`` and undo every live injection of its ``faults``; nothing for
    a broker that was stopped (its injections went with it)."""
    if broker.broker is None or broker.loop.is_closed():
        return
    if broker.is_down:
        broker.up()
    broker.faults.clear()


def restore_cluster(cluster: EmbeddedCluster) -> None:
    """Start every broker process that is not running (taken down, stopped, killed or crashed) on its data and
    port, then undo every live injection on each broker."""
    for broker_id in cluster.broker_ids:
        proc = cluster.processes.get(broker_id)
        if proc is not None and proc.poll() is not None:
            cluster.forget_broker(broker_id)
            proc = None
        if proc is None:
            cluster.broker_up(broker_id)
    for broker_id in cluster.broker_ids:
        cluster.faults(broker_id).clear()
