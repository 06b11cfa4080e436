"""The pure parts of ``broker.cluster_operations``: the replica list that makes a broker the preferred leader, and
the arguments refused before any broker is asked."""

from __future__ import annotations

import pytest

from broker.cluster_operations import COORDINATOR_KEY_TYPES, ClusterOperations, preferred_target


@pytest.mark.parametrize(
    "replicas, broker_id, target",
    [
        ([1, 2, 3], 1, [1, 2, 3]),  # already preferred: nothing to reassign
        ([1, 2, 3], 3, [3, 1, 2]),  # a replica: reordered, the others keep their order
        ([2, 1], 1, [1, 2]),
        ([1, 2], 3, [3, 1]),  # not a replica: takes the last one's place, the replication factor stays
        ([1], 2, [2]),
        ([4, 5, 6], 1, [1, 4, 5]),
    ],
)
def test_preferred_target(replicas, broker_id, target):
    assert preferred_target(replicas, broker_id) == target


def test_coordinator_key_types_name_the_internal_topics_and_kafkas_partitioning():
    assert {name: (code, topic) for name, (code, topic, _) in COORDINATOR_KEY_TYPES.items()} == {
        "group": (0, "__consumer_offsets"),
        "transaction": (1, "__transaction_state"),
    }
    # Java's "group-1".hashCode() is 293427299 and "txn-ffff".hashCode() -1672267005 (Utils.abs, then % 50)
    assert COORDINATOR_KEY_TYPES["group"][2]("group-1", 50) == 293427299 % 50
    assert COORDINATOR_KEY_TYPES["transaction"][2]("txn-ffff", 50) == 1672267005 % 50


def test_an_unknown_key_type_is_refused_before_any_broker_is_asked():
    with pytest.raises(ValueError, match="key_type must be one of \\['group', 'transaction'\\], not 'share'"):
        ClusterOperations(cluster=None).pin_coordinator("g", 1, key_type="share")  # no cluster is needed
