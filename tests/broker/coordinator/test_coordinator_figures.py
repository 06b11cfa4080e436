"""The figures the coordinators report to ``broker.metrics``: groups and transactions by state, consumer lag;
only what is coordinated here (a loaded ``__consumer_offsets``/``__transaction_state`` partition) counts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from broker.coordinator.consumer.group import ConsumerGroupState
from broker.coordinator.group import Group, GroupState
from broker.coordinator.offset_store import CommittedOffset
from broker.coordinator.txn_metadata import TxnMetadata, TxnState
from broker.metrics import ConsumerLag

from ..services_builder import build_services


class Replicas:
    """The replica manager as the coordinators see it: local replicas with a high watermark."""

    def __init__(self, high_watermarks: dict[tuple[str, int], int]) -> None:
        self.leadership_listeners: list = []
        self.high_watermarks = high_watermarks

    def get_partition(self, topic, partition):
        hw = self.high_watermarks.get((topic, partition))
        return None if hw is None else SimpleNamespace(high_watermark=hw)


@pytest.fixture
def services(tmp_path):
    return build_services(tmp_path, replica_manager=Replicas({("t", 0): 10, ("t", 1): 10, ("t", 2): 10}))


def coordinate(topic, partition_of, here: list[str], elsewhere: list[str]) -> None:
    """Load the partitions of the ids ``here``; check those of ``elsewhere`` stay unloaded."""
    topic.loaded.update({partition_of(i): 0 for i in here})
    assert not any(partition_of(i) in topic.loaded for i in elsewhere), "pick ids on other partitions"


def test_groups_by_state_counts_the_coordinated_groups_in_every_state(services):
    gc = services.group_coordinator
    states = {
        "g-empty": GroupState.EMPTY,
        "g-stable-1": GroupState.STABLE,
        "g-stable-2": GroupState.STABLE,
        "g-joining": GroupState.PREPARING_REBALANCE,
    }
    coordinate(gc.topic, gc.partition_of, list(states), ["g-elsewhere-7"])
    for group_id, state in {**states, "g-elsewhere-7": GroupState.STABLE}.items():
        gc.groups[group_id] = Group(group_id, state=state)
    assert gc.groups_by_state() == {
        "Empty": 1,
        "PreparingRebalance": 1,
        "CompletingRebalance": 0,
        "Stable": 2,
        "Dead": 0,
        "Assigning": 0,
        "Reconciling": 0,
    }


def test_groups_by_state_counts_consumer_groups_beside_classic_ones(services):
    gc = services.group_coordinator
    coordinate(gc.topic, gc.partition_of, ["g-classic", "cg-empty"], ["g-elsewhere-7"])
    gc.groups["g-classic"] = Group("g-classic", state=GroupState.EMPTY)
    gc.consumer_groups["cg-empty"] = gc._new_consumer_group("cg-empty")
    gc.consumer_groups["g-elsewhere-7"] = gc._new_consumer_group("g-elsewhere-7")
    counts = gc.groups_by_state()
    assert counts["Empty"] == 2  # one of each kind; the one coordinated elsewhere is not counted
    assert counts["Assigning"] == counts["Reconciling"] == counts["Stable"] == 0


def test_groups_by_state_is_zero_for_every_state_when_nothing_is_coordinated(services):
    states = {s.value for s in GroupState} | {s.value for s in ConsumerGroupState}
    assert services.group_coordinator.groups_by_state() == dict.fromkeys(states, 0)


@pytest.mark.parametrize(
    ("committed", "partition", "lag"),
    [
        (3, 0, [7]),  # high watermark 10 - committed 3
        (10, 0, [0]),  # caught up
        (12, 1, [0]),  # committed past the high watermark (a follower's trails): never negative
        (-1, 2, []),  # no offset committed (-1): no lag
    ],
)
def test_consumer_lag_is_the_high_watermark_minus_the_committed_offset(services, committed, partition, lag):
    gc = services.group_coordinator
    coordinate(gc.topic, gc.partition_of, ["g"], [])
    gc.store.offsets["g"] = {("t", partition): CommittedOffset(committed)}
    assert gc.consumer_lag() == [ConsumerLag("g", "t", partition, n) for n in lag]


def test_consumer_lag_leaves_out_groups_coordinated_elsewhere_and_partitions_without_a_local_replica(services):
    gc = services.group_coordinator
    coordinate(gc.topic, gc.partition_of, ["g"], ["g-elsewhere-7"])
    gc.store.offsets["g"] = {("t", 0): CommittedOffset(4), ("not-here", 0): CommittedOffset(1)}
    gc.store.offsets["g-elsewhere-7"] = {("t", 0): CommittedOffset(1)}
    assert gc.consumer_lag() == [ConsumerLag("g", "t", 0, 6)]


def test_transactions_by_state_counts_the_coordinated_ids_as_list_transactions_lists_them(services):
    tc = services.txn_coordinator
    states = {
        "tx-idle": TxnState.EMPTY,
        "tx-1": TxnState.ONGOING,
        "tx-2": TxnState.ONGOING,
        "tx-committing": TxnState.PREPARE_COMMIT,
        "tx-done": TxnState.COMPLETE_ABORT,
    }
    coordinate(tc.topic, tc.partition_of, [*states, "tx-no-epoch"], ["tx-elsewhere-3"])
    for tid, state in {**states, "tx-elsewhere-3": TxnState.ONGOING}.items():
        tc.txns[tid] = TxnMetadata(tid, producer_id=1, producer_epoch=0, state=state)
    tc.txns["tx-no-epoch"] = TxnMetadata("tx-no-epoch", producer_id=2)  # no InitProducerId answered yet
    counts = tc.transactions_by_state()
    assert counts == {
        "Empty": 1,
        "Ongoing": 2,
        "PrepareCommit": 1,
        "PrepareAbort": 0,
        "CompleteCommit": 0,
        "CompleteAbort": 1,
        "Dead": 0,
        "PrepareEpochFence": 0,
    }
    assert sum(counts.values()) == len(tc.list_transactions(None, None))
