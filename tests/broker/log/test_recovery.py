"""Crash recovery: random corruption, a lost tail, garbage appended, broken indexes, interrupted swaps.

Each case writes a log, closes it, damages the files the way a crash can (seed 000 section 5.5,
"Guarantees"), reopens it as after an unclean shutdown, and checks that exactly the valid prefix is
served and that the log keeps working.
"""

from __future__ import annotations

import os
import random
import struct

import pytest

from broker.log import LogConfig, PartitionLog
from spark_kafkalog.records import Compression

from .helpers import batch, read_all, value_batch

CODECS = [Compression.NONE, Compression.GZIP, Compression.LZ4]
# base_offset (0-7) and partition_leader_epoch (12-15) are outside the CRC in the v2 format (as in Kafka);
# damage there is only caught when it breaks offset order. Random damage avoids those header fields.
UNCHECKED = set(range(0, 8)) | set(range(12, 16))


def _write_log(path_factory, clock, seed: int, config: LogConfig, batches: int = 30):
    """A closed log of random batches; returns (dir, [(position, size, records)]) for its last segment."""
    rng = random.Random(seed)
    plog = PartitionLog.open(path_factory / "t-0", config, time=clock, recover=False)
    for _i in range(batches):
        n = rng.randint(1, 8)
        values = [rng.randbytes(rng.randint(0, 120)) for _ in range(n)]
        plog.append_as_leader(
            batch(values, keys=[b"k%d" % j for j in range(n)], codec=rng.choice(CODECS)), leader_epoch=1
        )
    records = read_all(plog)
    active = plog.active_segment
    layout = [
        (pos, h.batch_length + 12, h.base_offset, h.base_offset + h.last_offset_delta)
        for pos, h in active.iter_headers(0)
    ]
    path = active.file.path
    plog.close()
    return path, layout, records


def _reopen(tmp_path, clock, config, recovery_point=0):
    return PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=True, recovery_point=recovery_point)


def _expected(records, layout, bad_position):
    """Records of batches that end at or before the damaged batch starts."""
    cut = next(base for pos, size, base, last in layout if pos <= bad_position < pos + size)
    return [r for r in records if r.offset < cut], cut


@pytest.mark.parametrize("seed", range(12))
def test_random_corruption_in_the_active_segment_keeps_exactly_the_valid_prefix(tmp_path, clock, seed):
    _check_random_corruption(tmp_path, clock, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 400))
def test_random_corruption_soak(tmp_path, clock, seed):
    _check_random_corruption(tmp_path, clock, seed)


def _check_random_corruption(tmp_path, clock, seed: int) -> None:
    config = LogConfig(segment_bytes=6000, index_interval_bytes=256)
    path, layout, records = _write_log(tmp_path, clock, seed, config)
    rng = random.Random(1000 + seed)
    size = path.stat().st_size
    while True:
        position = rng.randrange(size)
        batch_start = max(pos for pos, *_ in layout if pos <= position)
        if position - batch_start not in UNCHECKED:
            break
    data = bytearray(path.read_bytes())
    data[position] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    plog = _reopen(tmp_path, clock, config)
    try:
        expected, cut = _expected(records, layout, position)
        assert read_all(plog) == expected
        assert plog.log_end_offset == cut
        assert plog.recovery_point == cut
        # the log keeps working after the truncation
        info = plog.append_as_leader(value_batch(2, tag="after"), leader_epoch=2)
        assert info.first_offset == cut
        assert [r.value for r in read_all(plog)][-2:] == [b"after-0", b"after-1"]
    finally:
        plog.close()


@pytest.mark.parametrize("seed", range(8))
def test_a_truncated_tail_keeps_the_complete_batches(tmp_path, clock, seed):
    config = LogConfig(index_interval_bytes=128)
    path, layout, records = _write_log(tmp_path, clock, seed, config)
    rng = random.Random(seed)
    new_size = rng.randrange(path.stat().st_size)
    os.truncate(path, new_size)
    plog = _reopen(tmp_path, clock, config)
    try:
        complete = [(base, last) for pos, size, base, last in layout if pos + size <= new_size]
        cut = complete[-1][1] + 1 if complete else 0
        assert read_all(plog) == [r for r in records if r.offset < cut]
        assert plog.active_segment.size == sum(size for pos, size, *_ in layout if pos + size <= new_size)
    finally:
        plog.close()


@pytest.mark.parametrize("seed", range(6))
def test_garbage_appended_after_the_last_batch_is_removed(tmp_path, clock, seed):
    config = LogConfig()
    path, layout, records = _write_log(tmp_path, clock, seed, config)
    original = path.stat().st_size
    rng = random.Random(seed)
    garbage = rng.randbytes(rng.randint(1, 3000))
    if seed % 2:
        # a plausible header: the next offset and a length that fits, then nonsense (bad CRC)
        next_offset = records[-1].offset + 1
        garbage = struct.pack(">qiib", next_offset, len(garbage) + 49, 0, 2) + garbage + bytes(49)
    with open(path, "ab") as f:
        f.write(garbage)
    plog = _reopen(tmp_path, clock, config)
    try:
        assert read_all(plog) == records
        assert path.stat().st_size == original
        assert plog.log_end_offset == records[-1].offset + 1
    finally:
        plog.close()


def test_zeroed_block_in_the_middle_truncates_there_and_drops_later_segments(tmp_path, clock):
    config = LogConfig(segment_bytes=3000)
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    for _i in range(40):
        plog.append_as_leader(value_batch(4, size=30), leader_epoch=0)
    records = read_all(plog)
    second = plog.segments[1]
    layout = list(second.iter_headers(0))
    victim_pos, victim = layout[3]
    later = [s.file.path for s in plog.segments[2:]]
    plog.close()
    with open(second.file.path, "r+b") as f:
        f.seek(victim_pos + 30)
        f.write(bytes(200))
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=True, recovery_point=0)
    try:
        assert read_all(plog) == [r for r in records if r.offset < victim.base_offset]
        assert len(plog.segments) == 2
        assert not any(p.exists() for p in later)
    finally:
        plog.close()


def test_segments_below_the_recovery_point_are_trusted(tmp_path, clock):
    config = LogConfig(segment_bytes=2000)
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    for _ in range(20):
        plog.append_as_leader(value_batch(3, size=40), leader_epoch=0)
    first = plog.segments[0]
    recovery_point = plog.segments[-1].base_offset
    plog.close()
    data = bytearray(first.file.path.read_bytes())
    data[-1] ^= 0xFF  # damage the last batch of a flushed segment: not re-checked
    first.file.path.write_bytes(bytes(data))
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=True, recovery_point=recovery_point)
    try:
        assert plog.segments[0].size == len(data)
    finally:
        plog.close()


def test_offsets_going_backwards_are_detected(tmp_path, clock):
    config = LogConfig()
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    for _ in range(5):
        plog.append_as_leader(value_batch(2), leader_epoch=0)
    path = plog.active_segment.file.path
    third = list(plog.active_segment.iter_headers(0))[2][0]
    plog.close()
    with open(path, "r+b") as f:
        f.seek(third)
        f.write(struct.pack(">q", 1))  # base offset 1: overlaps the first batch (outside the CRC)
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=True)
    try:
        assert plog.log_end_offset == 4
    finally:
        plog.close()


@pytest.mark.parametrize("damage", ["missing", "garbage", "decreasing", "beyond-end", "wrong-batch", "odd-size"])
def test_a_missing_or_corrupt_index_is_rebuilt_on_a_clean_open(tmp_path, clock, damage):
    config = LogConfig(index_interval_bytes=100)
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    for i in range(30):
        plog.append_as_leader(value_batch(3, size=20, timestamps=[i * 10] * 3), leader_epoch=0)
    records = read_all(plog)
    segment = plog.active_segment
    good_index = list(segment.index._keys), list(segment.index._values)
    index_path, time_path = segment.index.path, segment.time_index.path
    plog.close()
    size = segment.size
    if damage == "missing":
        index_path.unlink()
        time_path.unlink()
    elif damage == "garbage":
        index_path.write_bytes(os.urandom(64))
        time_path.write_bytes(os.urandom(36))
    elif damage == "decreasing":
        index_path.write_bytes(struct.pack(">IIII", 10, 500, 5, 600))
    elif damage == "beyond-end":
        index_path.write_bytes(struct.pack(">II", 10, size + 10))
    elif damage == "wrong-batch":
        index_path.write_bytes(struct.pack(">II", 4, 200))
    else:
        index_path.write_bytes(index_path.read_bytes() + b"\x00\x01\x02")
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    try:
        assert (list(plog.active_segment.index._keys), list(plog.active_segment.index._values)) == good_index
        assert read_all(plog) == records
        assert plog.offset_for_timestamp(150) == (45, 150)
        for offset in (0, 17, 44, 89):
            got = read_all(plog, start=offset)
            assert got[0].offset == offset
    finally:
        plog.close()


def test_leftover_files_of_interrupted_operations_are_settled(tmp_path, clock):
    config = LogConfig(segment_bytes=1000)
    plog = PartitionLog.open(tmp_path / "t-0", config, time=clock, recover=False)
    for _ in range(10):
        plog.append_as_leader(value_batch(3, size=30), leader_epoch=0)
    records = read_all(plog)
    plog.close()
    d = tmp_path / "t-0"
    (d / "00000000000000000003.log.deleted").write_bytes(b"old")
    (d / "00000000000000000003.log.cleaned").write_bytes(b"half")
    (d / "00000000000000000099.index").write_bytes(b"")
    (d / "recovery.tmp").write_bytes(b"x")
    plog = PartitionLog.open(d, config, time=clock, recover=False)
    try:
        assert read_all(plog) == records
        names = sorted(p.name for p in d.iterdir())
        assert not [
            n for n in names if n.endswith((".deleted", ".cleaned", ".tmp")) or n.startswith("000000000000000000099")
        ]
    finally:
        plog.close()


def test_leader_epochs_are_rebuilt_from_batches_when_the_checkpoint_is_lost(tmp_path, clock):
    plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), time=clock, recover=False)
    plog.append_as_leader(value_batch(2), leader_epoch=1)
    plog.append_as_leader(value_batch(2), leader_epoch=4)
    plog.close()
    (tmp_path / "t-0" / "leader-epoch-checkpoint").unlink()
    plog = PartitionLog.open(tmp_path / "t-0", LogConfig(), time=clock, recover=True)
    try:
        assert plog.leader_epoch_entries == [(1, 0), (4, 2)]
    finally:
        plog.close()
