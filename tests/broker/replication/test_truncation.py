"""Leader-epoch truncation: the pure divergence rule, truncation on the log, and a returning old leader
that drops the records the new leader never had (two in-process brokers)."""

from __future__ import annotations

import pytest

from broker.cluster.registry import PartitionState
from broker.log import LogAppendError, LogConfig, PartitionLog
from broker.log.errors import InvalidOffsetError
from broker.replication.fetcher import truncation_offset
from broker.replication.partition import TopicPartition
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from ..requests import batch
from .cluster import Cluster


def cache_end(entries, leo):
    """``end_offset_for_epoch`` over ``entries`` [(epoch, start)] (LeaderEpochCache's rule)."""

    def end_for(epoch):
        if epoch == entries[-1][0]:
            return epoch, leo
        higher = next((e for e in entries if e[0] > epoch), None)
        if higher is None:
            return -1, -1
        floor = [e for e in entries if e[0] <= epoch]
        return (floor[-1][0] if floor else epoch), higher[1]

    return end_for


@pytest.mark.parametrize(
    "entries, leo, hw, asked, answer, expected",
    [
        # same epoch on both sides: keep what both have
        ([(0, 0)], 15, 10, 0, (0, 10), (10, True)),
        ([(0, 0)], 8, 8, 0, (0, 10), (8, True)),  # the follower is behind: nothing to drop
        ([(0, 0), (2, 10)], 14, 10, 2, (2, 20), (14, True)),
        # the leader never had our latest epoch 2 and answers its epoch 1 ending at 12: we have epoch 1
        # up to 10 only (our epoch 2 starts there) -> keep 10
        ([(0, 0), (1, 5), (2, 10)], 14, 9, 2, (1, 12), (10, True)),
        # the leader's largest epoch below ours is 0, ending at 7; our epoch 0 ends at 10 -> 7
        ([(0, 0), (2, 10)], 14, 9, 2, (0, 7), (7, True)),
        # the leader's epoch 1 is unknown here (we jumped from 0 to 2): drop epoch 2 and ask again
        ([(0, 0), (2, 10)], 14, 9, 2, (1, 12), (10, False)),
        ([(1, 0), (3, 10)], 14, 4, 3, (2, 12), (10, False)),
        # no epochs at all, or an epoch the leader cannot place: the high watermark
        ([], 5, 3, -1, (-1, -1), (3, True)),
        ([(4, 0)], 5, 3, 4, (-1, -1), (3, True)),
    ],
)
def test_truncation_offset(entries, leo, hw, asked, answer, expected):
    end_for = cache_end(entries, leo) if entries else (lambda e: (-1, -1))
    assert truncation_offset(asked, answer[0], answer[1], leo, hw, end_for) == expected


def test_truncation_asks_again_when_it_never_wrote_the_leaders_epoch():
    # our epochs 0 at 0, 3 at 10; the leader answers epoch 2 (ending at 12) for our 3 -> end_offset_for(2)
    # here is (0, 10): epoch 2 is not ours, so drop epoch 3 (truncate to 10) and ask again for epoch 0
    end_for = cache_end([(0, 0), (3, 10)], 14)
    assert end_for(2) == (0, 10)
    assert truncation_offset(3, 2, 12, 14, 4, end_for) == (10, False)


def test_follower_append_and_truncation_on_the_log(tmp_path):
    leader = PartitionLog.open(tmp_path / "t-0", LogConfig(), recover=False)
    follower = PartitionLog.open(tmp_path / "f-0", LogConfig(), recover=False)
    try:
        for epoch, n in ((0, 3), (0, 2), (2, 4)):
            info = leader.append_as_leader(batch([b"e%d-%d" % (epoch, i) for i in range(n)]), leader_epoch=epoch)
            data = leader.read(info.first_offset, 1 << 20, max_offset=None, min_one_batch=True)
            follower.append_as_follower(bytearray(data.records.read_bytes()))
        assert follower.log_end_offset == leader.log_end_offset == 9
        assert follower.leader_epoch_entries == leader.leader_epoch_entries == [(0, 0), (2, 5)]
        # a batch not continuing the log end is refused (offsets are the leader's, never reassigned)
        data = leader.read(0, 1 << 20, max_offset=None, min_one_batch=True)
        with pytest.raises(InvalidOffsetError):
            follower.append_as_follower(bytearray(data.records.read_bytes()))
        # corrupt a byte inside the records: the CRC check refuses it
        info = leader.append_as_leader(batch([b"x" * 20]), leader_epoch=2)
        raw = bytearray(
            leader.read(info.first_offset, 1 << 20, max_offset=None, min_one_batch=True).records.read_bytes()
        )
        raw[-5] ^= 0xFF
        with pytest.raises(LogAppendError) as e:
            follower.append_as_follower(raw)
        assert e.value.error_code == ErrorCode.CORRUPT_MESSAGE
        follower.truncate_to(5)  # the divergence point: epoch 2 is gone
        assert follower.log_end_offset == 5
        assert follower.leader_epoch_entries == [(0, 0)]
        assert follower.end_offset_for_epoch(0) == (0, 5)
    finally:
        leader.close()
        follower.close()


def test_a_leader_that_loses_leadership_drops_records_the_new_leader_does_not_have(tmp_path_factory):
    c = Cluster(2, tmp_path_factory, replica_fetch_wait_max_ms=100, replica_fetch_backoff_ms=100)
    try:
        c.create_topic("div", {0: (0, 1)})
        wait_until(lambda: c.state("div") is not None and sorted(c.state("div").isr) == [0, 1], what="ISR [0, 1]")
        assert c.produce(0, "div", [b"committed-%d" % i for i in range(5)]).error_code == ErrorCode.NONE
        wait_until(lambda: c.offsets(1, "div") == (5, 5), what="follower caught up")

        # broker 1 stops copying (as if cut off); the leader takes three acks=1 records only it has
        rm1 = c.brokers[1].broker.replica_manager
        c.brokers[1].call(lambda: rm1.fetchers.remove(TopicPartition("div", 0)))
        assert c.produce(0, "div", [b"lost-%d" % i for i in range(3)], acks=1).base_offset == 5
        assert c.offsets(0, "div")[0] == 8 and c.offsets(1, "div")[0] == 5

        # the controller's election of broker 1 (epoch 1, ISR [1]), written as the controller writes it
        st = c.state("div")
        c.set_state("div", PartitionState(1, st.leader_epoch + 1, (1,), st.controller_epoch, st.zk_version))
        wait_until(lambda: c.partition(1, "div").is_leader, what="broker 1 leads")
        r = c.produce(1, "div", [b"new-0", b"new-1"], acks=1)
        assert (r.error_code, r.base_offset) == (ErrorCode.NONE, 5)

        # broker 0, now follower, truncates to 5 (where epoch 0 ends on the new leader), then copies
        wait_until(lambda: c.offsets(0, "div") == (7, 7), what="old leader in line with the new one")
        assert c.log_bytes(0, "div") == c.log_bytes(1, "div")
        assert b"lost-" not in c.log_bytes(0, "div")
        assert c.brokers[0].call(lambda: c.partition(0, "div").log.leader_epoch_entries) == [(0, 0), (1, 5)]
        wait_until(lambda: sorted(c.state("div").isr) == [0, 1], what="old leader back in the ISR")

        # and again after a restart: its log stays in line with the leader's
        c.stop(0)
        assert c.produce(1, "div", [b"later"], acks=1).base_offset == 7
        c.start(0)
        wait_until(lambda: c.offsets(0, "div") == (8, 8), what="restarted follower caught up")
        assert c.log_bytes(0, "div") == c.log_bytes(1, "div")
    finally:
        c.close()


def test_a_new_leader_epoch_starts_at_the_log_end_before_any_append(tmp_path):
    plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), recover=False)
    try:
        plog.append_as_leader(batch([b"a", b"b"]), leader_epoch=0)
        plog.assign_leader_epoch(3)
        assert plog.leader_epoch_entries == [(0, 0), (3, 2)]
        # a follower that wrote epoch 2 under another leader learns that epoch 0 is the last one here below
        # it, ending at 2: it keeps nothing of its epoch 2
        assert plog.end_offset_for_epoch(2) == (0, 2)
        plog.assign_leader_epoch(1)  # older epochs change nothing
        assert plog.leader_epoch_entries == [(0, 0), (3, 2)]
        assert plog.append_as_leader(batch([b"c"]), leader_epoch=3).first_offset == 2
        assert plog.leader_epoch_entries == [(0, 0), (3, 2)]
    finally:
        plog.close()
