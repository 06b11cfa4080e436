"""Leader-side replica state as tables: the high watermark from the ISR, caught-up times, ISR shrink and
expand candidates (``Partition`` and ``ReplicaState`` on a real log, no broker)."""

from __future__ import annotations

import pytest

from broker.cluster.registry import PartitionState
from broker.log import LogConfig, PartitionLog
from broker.replication.partition import Partition, ReplicaState, TopicPartition, high_watermark_for

from ..requests import batch


@pytest.mark.parametrize(
    "isr, leader_leo, follower_leos, expected",
    [
        ((0,), 10, {}, 10),  # the leader alone: everything appended is committed
        ((0, 1, 2), 10, {1: 10, 2: 10}, 10),
        ((0, 1, 2), 10, {1: 7, 2: 9}, 7),  # the slowest in-sync replica
        ((0, 1), 10, {1: 10, 2: 3}, 10),  # a follower outside the ISR does not hold it back
        ((0, 1, 2), 10, {1: 10}, -1),  # an ISR follower not heard from yet: nothing committed through it
        ((1, 0), 4, {1: 6}, 4),  # a follower cannot be ahead of the leader for the HW
    ],
)
def test_high_watermark_is_the_smallest_log_end_offset_in_the_isr(isr, leader_leo, follower_leos, expected):
    followers = {r: ReplicaState(r, log_end_offset=leo) for r, leo in follower_leos.items()}
    assert high_watermark_for(isr, 0, leader_leo, followers) == expected


@pytest.mark.parametrize(
    "fetches, expected_caught_up",
    [
        # (fetch offset, leader LEO, now): caught up when at the leader's LEO ...
        ([(10, 10, 100)], 100),
        # ... or at the LEO the leader had at the previous fetch (then caught up at that fetch's time)
        ([(5, 10, 100), (10, 12, 200)], 100),
        ([(5, 10, 100), (8, 12, 200)], 0),  # behind both: never caught up
        ([(10, 10, 100), (10, 20, 300), (15, 25, 400)], 100),  # still short of 20 at 400
        ([(10, 10, 100), (10, 20, 300), (20, 25, 400)], 300),
    ],
)
def test_last_caught_up_time(fetches, expected_caught_up):
    st = ReplicaState(1)
    for offset, leader_leo, now in fetches:
        st.update_fetch(offset, leader_leo, now)
    assert st.last_caught_up_ms == expected_caught_up
    assert st.log_end_offset == fetches[-1][0]


@pytest.fixture
def leader(tmp_path):
    plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), recover=False)
    part = Partition(TopicPartition("t", 0), 0, plog)
    part.apply_state(PartitionState(0, 3, (0, 1, 2), 1, zk_version=4), (0, 1, 2), now_ms=1000)
    yield part
    plog.close()


def test_leader_advances_the_high_watermark_with_follower_fetches(leader):
    leader.append_as_leader(batch([b"x"] * 10), required_acks=-1)
    assert (leader.log.log_end_offset, leader.high_watermark) == (10, 0)
    leader.update_follower_fetch(1, 10, 1100)
    assert leader.high_watermark == 0  # broker 2 has not fetched yet
    leader.update_follower_fetch(2, 6, 1100)
    assert leader.high_watermark == 6
    leader.update_follower_fetch(2, 10, 1200)
    assert leader.high_watermark == 10
    assert leader.log.leader_epoch_entries == [(3, 0)]
    assert not leader.update_follower_fetch(7, 10, 1200)  # not a replica
    assert leader.update_follower_fetch(1, 12, 1300)  # beyond the log end: out of range, not recorded
    assert leader.followers[1].log_end_offset == 10


def test_isr_shrink_and_expand_candidates(leader):
    leader.append_as_leader(batch([b"x"] * 4), required_acks=1)
    leader.update_follower_fetch(1, 4, 1500)
    # ISR followers count as caught up at the election (1000); 2 never fetched
    assert leader.out_of_sync_replicas(now_ms=1900, max_lag_ms=1000) == []
    assert leader.out_of_sync_replicas(now_ms=2100, max_lag_ms=1000) == [2]
    leader.set_isr((0, 1), 5)
    assert leader.high_watermark == 4  # broker 2 no longer holds it back
    assert not leader.is_catching_up(2)
    leader.update_follower_fetch(2, 3, 2200)
    assert not leader.is_catching_up(2)  # below the high watermark
    leader.update_follower_fetch(2, 4, 2300)
    assert leader.is_catching_up(2)
    assert not leader.is_catching_up(1)  # already in the ISR


def test_acks_all_is_refused_before_the_append_when_the_isr_is_too_small(tmp_path):
    from broker.log import LogAppendError

    plog = PartitionLog.open(
        tmp_path / "t-0", LogConfig().with_topic_overrides({"min.insync.replicas": "2"}), recover=False
    )
    part = Partition(TopicPartition("t", 0), 0, plog)
    try:
        part.apply_state(PartitionState(0, 0, (0,), 1), (0, 1), now_ms=0)
        with pytest.raises(LogAppendError) as e:
            part.append_as_leader(batch([b"x"]), required_acks=-1)
        assert e.value.error_code == 19  # NOT_ENOUGH_REPLICAS
        assert plog.log_end_offset == 0
        assert part.append_as_leader(batch([b"x"]), required_acks=1).first_offset == 0
    finally:
        plog.close()
