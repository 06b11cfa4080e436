"""Readers racing the writer and the maintenance thread: no blocking, no half views, regions stay valid."""

from __future__ import annotations

import os
import random
import socket
import threading
import time

from broker.log import LogConfig
from broker.log.cleaner import clean_log
from spark_kafkalog.protocol import ErrorCode
from spark_kafkalog.records import iter_batches, validate_batch
from tests.waiting import wait_until

from .helpers import batch, read_all, value_batch


def test_a_region_stays_readable_after_its_segment_is_deleted(open_log, clock):
    plog = open_log(LogConfig(segment_bytes=len(value_batch(2, size=50)), file_delete_delay_ms=0))
    for _ in range(3):
        plog.append_as_leader(value_batch(2, size=50), leader_epoch=0)
    plog.high_watermark = plog.log_end_offset
    region = plog.read(0, 1 << 20).records
    expected = bytes(value_batch(2, size=50))[16:]  # all but the rewritten base offset and epoch
    path = plog.segments[0].file.path
    plog.delete_records_before(2)
    plog.purge_deleted_segments()
    assert not path.exists() and not list(plog.dir.glob("*.deleted"))
    assert region.read_bytes()[16:] == expected
    left, right = socket.socketpair()
    try:
        sent = os.sendfile(left.fileno(), region.fileno(), region.position, len(region))
        assert right.recv(1 << 16)[16:] == expected and sent == len(region)
    finally:
        left.close()
        right.close()
    fd = region.fileno()
    region.release()
    assert plog.segments[0].base_offset == 2
    try:
        os.fstat(fd)
        still_open = True
    except OSError:
        still_open = False
    assert not still_open  # the last reference closed the descriptor


def test_dropping_a_region_releases_its_reference(open_log):
    plog = open_log()
    plog.append_as_leader(value_batch(1), leader_epoch=0)
    shared = plog.segments[0].file
    before = shared.references
    region = plog.read(0, 100).records
    assert shared.references == before + 1
    del region
    assert shared.references == before


def _check_served(raw: bytes, low: int) -> list[int]:
    offsets = []
    for view in iter_batches(raw):
        validate_batch(view.data)
        assert view.last_offset >= low
        offsets.append(view.base_offset)
    assert offsets == sorted(offsets)
    return offsets


def test_reads_race_appends_retention_and_flushes(open_log, clock):
    size = len(value_batch(4, size=40))
    plog = open_log(LogConfig(segment_bytes=size * 3, retention_bytes=size * 12, file_delete_delay_ms=0))
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = [0, 0]  # served, out of range

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not stop.is_set():
                start, end = plog.log_start_offset, plog.log_end_offset
                offset = rng.randint(max(start - 3, 0), end)
                data = plog.read(offset, rng.randint(1, 4000), max_offset=plog.high_watermark)
                if data.error == ErrorCode.OFFSET_OUT_OF_RANGE:
                    assert offset < data.log_start_offset or offset > data.log_end_offset
                    reads[1] += 1
                    continue
                assert data.error == ErrorCode.NONE
                if data.records is not None:
                    raw = data.records.read_bytes()
                    assert len(raw) == len(data.records)
                    _check_served(raw, offset)
                    reads[0] += 1
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def maintenance() -> None:
        try:
            while not stop.is_set():
                plog.delete_old_segments()
                plog.flush()
                assert plog.recovery_point <= plog.log_end_offset
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(3)] + [threading.Thread(target=maintenance)]
    for t in threads:
        t.start()
    # Run until enough work has raced (not for a fixed time: a loaded CI machine is slow),
    # bounded so a livelock fails rather than hangs.
    give_up = time.monotonic() + 60
    appended = 0
    while (appended < 400 or reads[0] < 50) and time.monotonic() < give_up and not errors:
        plog.append_as_leader(value_batch(4, size=40), leader_epoch=0)
        plog.high_watermark = plog.log_end_offset
        appended += 4
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert reads[0] >= 50 and appended >= 400, (reads, appended)
    assert plog.log_start_offset > 0  # retention ran meanwhile
    assert [r.offset for r in read_all(plog)] == list(range(plog.log_start_offset, plog.log_end_offset))


def test_reads_race_the_cleaner_swap(open_log, clock):
    plog = open_log(
        LogConfig(cleanup_policy=("compact",), segment_bytes=600, min_cleanable_dirty_ratio=0.0, file_delete_delay_ms=0)
    )
    values = {}
    for i in range(200):
        key = b"k%d" % (i % 17)
        values[key] = b"v%d" % i
        plog.append_as_leader(batch([values[key]], keys=[key]), leader_epoch=0)
    plog.roll()
    plog.high_watermark = plog.log_end_offset
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = [0, 0]  # whole reads done, per reader

    def reader(i: int) -> None:
        try:
            while not stop.is_set():
                records = read_all(plog)
                assert [r.offset for r in records] == sorted(r.offset for r in records)
                latest = {}
                for r in records:
                    latest[r.key] = r.value
                assert latest == values  # old or new segments, the newest value per key is always there
                reads[i] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    stats = clean_log(plog, clock.milliseconds())
    plog.purge_deleted_segments()
    swapped = list(reads)  # reads started before the purge finished may still hold the old segments
    wait_until(
        lambda: errors or all(n >= before + 2 for n, before in zip(reads, swapped)),
        10,
        "each reader to read the cleaned log twice",
    )
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert stats is not None and len(read_all(plog)) == 17
