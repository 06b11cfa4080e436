"""Compaction against a brute-force model (hypothesis), batch structure, dirty ratio, interrupted swaps."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.log import LogConfig, ManualClock, PartitionLog
from broker.log.cleaner import _build_offset_map, _clean_group, _groups, clean_log, cleanable_range
from broker.log.log_loader import SWAP_SUFFIX
from spark_kafkalog.records import Compression, iter_batches

from .helpers import batch, batches_served, read_all

RETENTION = 1000
KEYS = [b"a", b"b", b"c", b"d", b"e"]

record_st = st.tuples(st.integers(min_value=0, max_value=len(KEYS) - 1), st.one_of(st.none(), st.binary(max_size=6)))
op_st = st.one_of(
    st.tuples(st.just("append"), st.lists(record_st, min_size=1, max_size=5), st.sampled_from(list(Compression))),
    st.tuples(st.just("roll")),
    st.tuples(st.just("advance"), st.integers(min_value=0, max_value=1500)),
    st.tuples(st.just("clean")),
)


def _expected_after_clean(model, plog, now, end):
    """Brute force: below ``end`` keep the newest record of each key, tombstones only while young."""
    written = {}
    for segment in plog.segments:
        for offset in range(segment.base_offset, segment.next_offset):
            written[offset] = segment.last_modified_ms
    newest = {}
    for offset, key, _ in model:
        if offset < end:
            newest[key] = offset
    out = []
    for offset, key, value in model:
        if offset >= end:
            out.append((offset, key, value))
        elif newest[key] == offset and not (value is None and now - written[offset] > RETENTION):
            out.append((offset, key, value))
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op_st, min_size=1, max_size=40), segment_bytes=st.sampled_from([150, 300, 100_000]))
def test_compaction_matches_a_brute_force_model(ops, segment_bytes):
    directory = Path(tempfile.mkdtemp())
    clock = ManualClock()
    config = LogConfig(
        cleanup_policy=("compact",),
        min_cleanable_dirty_ratio=0.0,
        delete_retention_ms=RETENTION,
        segment_bytes=segment_bytes,
        index_interval_bytes=64,
    )
    plog = PartitionLog.open(directory / "t-0", config, time=clock, recover=False)
    try:
        model: list[tuple[int, bytes, bytes | None]] = []
        original_batches = set()
        for op in ops + [("roll",), ("advance", 2000), ("clean",)]:
            if op[0] == "append":
                records = [(KEYS[k], v) for k, v in op[1]]
                info = plog.append_as_leader(
                    batch([v for _, v in records], keys=[k for k, _ in records], codec=op[2]), leader_epoch=0
                )
                original_batches.add((info.first_offset, info.last_offset))
                model += [(info.first_offset + i, k, v) for i, (k, v) in enumerate(records)]
            elif op[0] == "roll":
                plog.roll()
            elif op[0] == "advance":
                clock.advance(op[1])
            else:
                plog.high_watermark = plog.log_end_offset
                now = clock.milliseconds()
                cleanable = cleanable_range(plog, now)
                if cleanable is not None:
                    model = _expected_after_clean(model, plog, now, cleanable.end_offset)
                leo = plog.log_end_offset
                clean_log(plog, now)
                assert plog.log_end_offset == leo
            served = [(r.offset, r.key, r.value) for r in read_all(plog)]
            assert served == model
            # every batch keeps an original batch's offset range (base and last offset)
            assert set(batches_served(plog)) <= original_batches
        # the compacted log survives a restart (and an unclean one) unchanged
        plog.close()
        plog = PartitionLog.open(directory / "t-0", config, time=clock, recover=True)
        assert [(r.offset, r.key, r.value) for r in read_all(plog)] == model
    finally:
        plog.close(flush=False)
        shutil.rmtree(directory)


def _compacted_log(open_log, clock, **overrides):
    config = LogConfig(cleanup_policy=("compact",), segment_bytes=400, **overrides)
    plog = open_log(config)
    for i in range(30):
        plog.append_as_leader(
            batch([b"v%d" % i, b"w%d" % i], keys=[b"k%d" % (i % 3), b"j%d" % (i % 2)]), leader_epoch=0
        )
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    return plog


def test_unchanged_batches_are_copied_byte_for_byte_and_gaps_remain(open_log, clock):
    plog = _compacted_log(open_log, clock)
    last_batch = plog.read(58, 1 << 20).records.read_bytes()
    stats = clean_log(plog, clock.milliseconds())
    assert stats is not None and (stats.records_in, stats.records_out) == (60, 5)
    assert stats.bytes_out < stats.bytes_in and stats.end_offset == 60
    served = read_all(plog)
    assert [(r.offset, r.key, r.value) for r in served] == [
        (54, b"k0", b"v27"),
        (56, b"k1", b"v28"),
        (57, b"j0", b"w28"),
        (58, b"k2", b"v29"),
        (59, b"j1", b"w29"),
    ]
    with_records, empty = [], []
    for segment in plog.segments:
        for _, header in segment.iter_headers(0):
            last = header.base_offset + header.last_offset_delta
            (with_records if header.records_count else empty).append((header.base_offset, last))
            if not header.records_count:  # kept only to end its segment at the original offset
                assert last == segment.next_offset - 1
    assert with_records == [(54, 55), (56, 57), (58, 59)]  # batches between are gone: gaps
    assert plog.read(58, 1 << 20).records.read_bytes() == last_batch  # kept whole: the same bytes
    assert plog.first_dirty_offset == 60


def test_the_dirty_ratio_decides_when_a_log_is_cleaned(open_log, clock):
    plog = _compacted_log(open_log, clock, min_cleanable_dirty_ratio=0.5)
    assert clean_log(plog, clock.milliseconds()) is not None
    plog.append_as_leader(batch([b"x"], keys=[b"k0"]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    ratio = cleanable_range(plog, clock.milliseconds()).dirty_ratio
    assert 0 < ratio < 0.5
    assert clean_log(plog, clock.milliseconds()) is None
    assert clean_log(plog, clock.milliseconds(), force=True) is not None


def test_min_compaction_lag_keeps_young_segments_dirty(open_log, clock):
    plog = _compacted_log(open_log, clock, min_compaction_lag_ms=10_000, min_cleanable_dirty_ratio=0.0)
    assert cleanable_range(plog, clock.milliseconds()) is None  # newest record timestamps: T0 + 1
    clock.advance(10_000)
    assert cleanable_range(plog, clock.milliseconds()) is None
    clock.advance(1)
    assert clean_log(plog, clock.milliseconds()) is not None


def test_the_active_segment_and_data_above_the_high_watermark_are_never_cleaned(open_log, clock):
    plog = _compacted_log(open_log, clock, min_cleanable_dirty_ratio=0.0)
    plog.high_watermark = 10
    cleanable = cleanable_range(plog, clock.milliseconds())
    assert all(s.next_offset <= 10 for s in cleanable.segments)
    plog.high_watermark = plog.log_end_offset
    assert cleanable_range(plog, clock.milliseconds()).end_offset == plog.active_segment.base_offset


def test_the_last_batch_of_an_idempotent_producer_survives_as_an_empty_batch(open_log, clock):
    config = LogConfig(cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.0)
    plog = open_log(config)
    plog.append_as_leader(
        batch([b"old"], keys=[b"k"], producer_id=9, producer_epoch=0, base_sequence=0), leader_epoch=0
    )
    plog.append_as_leader(batch([b"new"], keys=[b"k"]), leader_epoch=0)
    plog.append_as_leader(batch([b"x"], keys=[b"z"]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    clean_log(plog, clock.milliseconds())
    views = list(iter_batches(plog.read(0, 1 << 20).records.read_bytes()))
    empty = views[0].header()
    assert (empty.base_offset, empty.records_count, empty.producer_id, empty.base_sequence) == (0, 0, 9, 0)
    assert [(r.offset, r.value) for r in read_all(plog)] == [(1, b"new"), (2, b"x")]


def test_an_interrupted_swap_is_completed_on_the_next_open(open_log, tmp_path, clock):
    plog = _compacted_log(open_log, clock, min_cleanable_dirty_ratio=0.0)
    now = clock.milliseconds()
    cleanable = cleanable_range(plog, now)
    offsets = _build_offset_map(cleanable.segments, cleanable.first_dirty_offset)
    group = _groups(cleanable.segments, 1 << 30)[0]
    new = _clean_group(plog, group, offsets, now, [0] * 5)
    expected = [r for r in read_all(plog) if r.offset >= group[-1].next_offset]
    # crash in the middle of the swap: the output is renamed .swap, one old segment already .deleted
    new.change_suffix(SWAP_SUFFIX)
    new.close()
    old = group[1].file.path
    old.rename(old.with_name(old.name + ".deleted"))
    plog.close(flush=False)
    reopened = open_log(plog.config, recover=True)
    served = read_all(reopened)
    assert [r for r in served if r.offset >= group[-1].next_offset] == expected
    below = [r for r in served if r.offset < group[-1].next_offset]
    assert len({r.key for r in below}) == len(below)  # compacted: one record per key
    assert not list(tmp_path.glob("t-0/*.swap")) and not list(tmp_path.glob("t-0/*.deleted"))
