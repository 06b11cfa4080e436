"""A follower far behind its leader catches up although each fetch answer ends in a batch cut short at
``replica.fetch.max.bytes`` (the leader stops at the byte limit; the follower keeps the whole batches)."""

from __future__ import annotations

import struct

import pytest

from broker.replication.fetcher import whole_batches
from spark_kafkalog.protocol import ErrorCode
from tests.waiting import wait_until

from .cluster import Cluster

FETCH_MAX_BYTES = 4000


def _entries(*sizes: int) -> bytes:
    """Entries of the given total sizes (12-byte prefix: base offset, batch length; filler body)."""
    return b"".join(struct.pack(">qi", i, size - 12) + b"\0" * (size - 12) for i, size in enumerate(sizes))


@pytest.mark.parametrize(
    "buf, kept",
    [
        (b"", 0),
        (_entries(100, 80), 180),
        (_entries(100, 80)[:150], 100),  # second entry cut short
        (_entries(100, 80)[:105], 100),  # cut inside the second entry's prefix
        (_entries(100)[:50], 0),
        (_entries(100) + struct.pack(">qi", 1, -5), 112),  # a negative length is left for validation
    ],
)
def test_whole_batches_drops_only_a_trailing_partial_entry(buf, kept):
    assert bytes(whole_batches(buf)) == buf[:kept]


def test_a_follower_behind_by_more_than_a_fetch_catches_up_through_cut_batches(tmp_path_factory):
    c = Cluster(
        2,
        tmp_path_factory,
        replica_fetch_max_bytes=FETCH_MAX_BYTES,
        replica_fetch_wait_max_ms=100,
        replica_fetch_backoff_ms=100,
    )
    try:
        c.create_topic("behind", {0: (0, 1)})
        wait_until(lambda: c.state("behind") is not None and c.state("behind").leader == 0, what="leader 0")
        c.pause_fetching(1, "behind")
        for n in range(20):  # batches of about 1.1 kB: 4000-byte answers end inside a batch
            r = c.produce(0, "behind", [b"%04d" % n + b"v" * 100 for _ in range(10)], acks=1)
            assert r.error_code == ErrorCode.NONE, r
        leader_end = c.offsets(0, "behind")[0]
        assert leader_end == 200
        follower = c.brokers[1]
        rm = follower.broker.replica_manager
        follower.call(lambda: rm.fetchers.add(rm.get_partition("behind", 0)))  # follows again from its log end
        wait_until(
            lambda: c.offsets(1, "behind")[0] == leader_end, timeout_s=60, what="the follower at the leader's log end"
        )
        assert c.log_bytes(1, "behind") == c.log_bytes(0, "behind")
    finally:
        c.close()
