"""Garbage in each checkpoint file the log store reads (the four offset checkpoints of a log dir and a
partition's ``leader-epoch-checkpoint``): the file is treated as missing with a warning naming it and the
line, every log loads with all its records, affected logs are recovered in full, and the file is rewritten.
Offsets beyond the log end in a well-formed file (a damaged disk, a data dir copied from elsewhere) hide or
delete nothing either: each is ignored or clamped with a warning naming the file."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from broker.log import LogConfig, LogManager
from broker.log.checkpoint import read_epoch_checkpoint, read_offset_checkpoint
from broker.log.leader_epoch import LEADER_EPOCH_CHECKPOINT
from broker.log.log_manager import (
    CLEAN_SHUTDOWN_FILE,
    CLEANER_CHECKPOINT,
    LOG_START_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_CHECKPOINT,
)

from .helpers import read_all, value_batch

KINDS: dict[str, Callable[[Path], Path]] = {
    "recovery-point": lambda d: d / RECOVERY_POINT_CHECKPOINT,
    "log-start": lambda d: d / LOG_START_CHECKPOINT,
    "replication": lambda d: d / REPLICATION_CHECKPOINT,
    "cleaner": lambda d: d / CLEANER_CHECKPOINT,
    "leader-epoch": lambda d: d / "t-0" / LEADER_EPOCH_CHECKPOINT,
}


def _lines(valid: bytes) -> list[bytes]:
    return valid.split(b"\n")[:-1]


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def _field(index: int, value: bytes) -> Callable[[bytes], bytes]:
    """Replace field ``index`` of the first entry line."""

    def damage(valid: bytes) -> bytes:
        lines = _lines(valid)
        fields = lines[2].split(b" ")
        fields[index] = value
        lines[2] = b" ".join(fields)
        return _join(lines)

    return damage


def _line(index: int, make: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    def damage(valid: bytes) -> bytes:
        lines = _lines(valid)
        lines[index] = make(lines[index])
        return _join(lines)

    return damage


def _duplicate_first_entry(valid: bytes) -> bytes:
    lines = _lines(valid)
    return _join([lines[0], str(int(lines[1]) + 1).encode(), lines[2], *lines[2:]])


GARBAGE: dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda v: b"",
    "binary zeros": lambda v: b"\x00" * 4096,
    "zeros over an entry": _line(2, lambda line: b"\x00" * len(line)),
    "no UTF-8 at all": lambda v: bytes(range(128, 256)) * 4,
    "not UTF-8 in an entry": _line(2, lambda line: b"\xc3\x28" + line),
    "not UTF-8 in the version": lambda v: b"\xff" + v[1:],
    "truncated mid-line": lambda v: v[: v.rindex(b" ")],
    "truncated by a line": lambda v: _join(_lines(v)[:-1]),
    "extra line": lambda v: v + _lines(v)[-1] + b"\n",
    "extra blank line": lambda v: v + b"\n",
    "wrong version": lambda v: b"1" + v[1:],
    "count too high": _line(1, lambda line: str(int(line) + 1).encode()),
    "count not a number": _line(1, lambda line: b"two"),
    "negative partition or epoch": _field(-2, b"-1"),
    "negative offset": _field(-1, b"-7"),
    "duplicate line": _duplicate_first_entry,
    "number beyond 64 bits": _field(-1, b"9" * 30),
    "non-ASCII digits": _field(-1, "\u0663".encode()),
}

#: an empty offset checkpoint is a valid one without entries (Kafka's reading); an empty epoch checkpoint is not
GARBAGE_CASES = [(k, g) for k in KINDS for g in GARBAGE if g != "empty" or k == "leader-epoch"]


#: the log end offset of each partition written by ``_populate``
LOG_ENDS = {0: 10, 1: 4}


def _every_offset(make: Callable[[int], int]) -> Callable[[bytes], bytes]:
    """Offset checkpoints: every entry's offset becomes ``make(log end of that partition)``. The leader epoch
    checkpoint of t-0: its last epoch starts at ``make(10)`` (still after the epochs before it)."""

    def damage(valid: bytes) -> bytes:
        lines = _lines(valid)
        for i in range(2, len(lines)):
            fields = lines[i].split(b" ")
            if len(fields) == 3:
                fields[2] = str(make(LOG_ENDS[int(fields[1])])).encode()
            elif i == len(lines) - 1:
                fields[1] = str(make(LOG_ENDS[0])).encode()
            lines[i] = b" ".join(fields)
        return _join(lines)

    return damage


BEYOND_THE_END: dict[str, Callable[[bytes], bytes]] = {
    "one past the log end": _every_offset(lambda end: end + 1),
    "far beyond the log end": _every_offset(lambda end: 1_000_000),
    "the largest 64-bit offset": _every_offset(lambda end: (1 << 63) - 1),
}


def _populate(log_dir: Path, clock, *, clean: bool) -> dict:
    """t-0: offsets 0-5 in epoch 1 and 6-9 in epoch 3; t-1: offsets 0-3 in epoch 2; both committed."""
    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    t0, t1 = manager.get_or_create_log("t", 0), manager.get_or_create_log("t", 1)
    for i in range(5):
        t0.append_as_leader(value_batch(2, f"a{i}"), leader_epoch=1 if i < 3 else 3)
    for i in range(2):
        t1.append_as_leader(value_batch(2, f"b{i}"), leader_epoch=2)
    for plog in (t0, t1):
        plog.high_watermark = plog.log_end_offset
        plog.flush()
    expected = {
        "records": {(p.topic, p.partition): _contents(p) for p in (t0, t1)},
        "epochs": {(p.topic, p.partition): p.leader_epoch_entries for p in (t0, t1)},
        "segments": {(p.topic, p.partition): p.active_segment.file.path for p in (t0, t1)},
    }
    assert expected["epochs"] == {("t", 0): [(1, 0), (3, 6)], ("t", 1): [(2, 0)]}
    if clean:
        manager.shutdown()
    else:  # a crash after the periodic checkpoint: no shutdown, the locks die with the process
        manager.write_checkpoints()
        for fd in manager._dir_locks:
            os.close(fd)
        manager._dir_locks.clear()
    return expected


def _contents(plog) -> list[tuple[int, bytes]]:
    return [(r.offset, r.value) for r in read_all(plog)]


def _warnings_naming(caplog, path: Path) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and str(path) in r.getMessage()]


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "crash"])
@pytest.mark.parametrize(("kind", "garbage"), GARBAGE_CASES)
def test_a_garbage_checkpoint_is_treated_as_missing(tmp_path, clock, caplog, kind, garbage, clean):
    log_dir = tmp_path / "d"
    expected = _populate(log_dir, clock, clean=clean)
    path = KINDS[kind](log_dir)
    path.write_bytes(GARBAGE[garbage](path.read_bytes()))
    caplog.set_level(logging.WARNING, logger="kafkalog.log")

    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    try:
        warnings = _warnings_naming(caplog, path)
        assert len(warnings) == 1 and ": line " in warnings[0], warnings
        for key, records in expected["records"].items():
            plog = manager.get_log(*key)
            assert _contents(plog) == records
            assert plog.leader_epoch_entries == expected["epochs"][key]
            assert plog.log_start_offset == 0 and plog.high_watermark <= plog.log_end_offset == records[-1][0] + 1
        reread = read_epoch_checkpoint(path) if kind == "leader-epoch" else read_offset_checkpoint(path)
        assert reread  # rewritten with valid entries
    finally:
        manager.shutdown()


@pytest.mark.parametrize("clean", [True, False], ids=["clean-shutdown", "crash"])
@pytest.mark.parametrize("beyond", BEYOND_THE_END)
@pytest.mark.parametrize("kind", KINDS)
def test_a_checkpoint_offset_beyond_the_log_end_hides_and_deletes_nothing(tmp_path, clock, caplog, kind, beyond, clean):
    log_dir = tmp_path / "d"
    expected = _populate(log_dir, clock, clean=clean)
    path = KINDS[kind](log_dir)
    damaged = BEYOND_THE_END[beyond](path.read_bytes())
    path.write_bytes(damaged)
    assert read_epoch_checkpoint(path) if kind == "leader-epoch" else read_offset_checkpoint(path)  # well-formed
    caplog.set_level(logging.WARNING, logger="kafkalog.log")

    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    try:
        warnings = _warnings_naming(caplog, path)
        if kind == "leader-epoch" and not clean:
            assert warnings == []  # epochs of batches lost in a crash are expected, and dropped as in Kafka
        else:
            assert warnings and all("beyond the log end offset" in w for w in warnings), warnings
        for (topic, partition), records in expected["records"].items():
            plog = manager.get_log(topic, partition)
            end = LOG_ENDS[partition]
            assert _contents(plog) == records and plog.log_end_offset == end == records[-1][0] + 1
            assert plog.leader_epoch_entries == expected["epochs"][(topic, partition)]
            assert (plog.log_start_offset, plog.high_watermark, plog.recovery_point) == (0, end, end)
            assert plog.first_dirty_offset == 0  # the cleaner starts again from the log start, as in Kafka
        if kind == "leader-epoch":
            assert read_epoch_checkpoint(path) == expected["epochs"][("t", 0)]  # rebuilt or truncated
        else:
            reread = read_offset_checkpoint(path)
            assert reread and all(offset <= LOG_ENDS[p] for (_, p), offset in reread.items())
    finally:
        manager.shutdown()


_UNREADABLE = b"\xfe\xff garbage"


@pytest.mark.parametrize(
    "kind, content, recovered",
    [
        ("recovery-point", _UNREADABLE, {0, 1}),
        ("leader-epoch", _UNREADABLE, {0}),
        ("recovery-point", BEYOND_THE_END["one past the log end"], {0, 1}),
        ("leader-epoch", BEYOND_THE_END["far beyond the log end"], {0}),
    ],
    ids=[
        "unreadable recovery points",
        "unreadable epochs",
        "recovery points beyond the end",
        "an epoch beyond the end",
    ],
)
def test_an_unreadable_or_impossible_checkpoint_makes_the_affected_logs_recover_in_full(
    tmp_path, clock, caplog, kind, content, recovered
):
    log_dir = tmp_path / "d"
    expected = _populate(log_dir, clock, clean=True)
    for segment in expected["segments"].values():  # damage the last batch of each log
        data = bytearray(segment.read_bytes())
        data[-1] ^= 0xFF
        segment.write_bytes(bytes(data))
    path = KINDS[kind](log_dir)
    path.write_bytes(content if isinstance(content, bytes) else content(path.read_bytes()))
    assert (log_dir / CLEAN_SHUTDOWN_FILE).exists()  # without the damaged file, nothing would be checked

    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    try:
        for p in (0, 1):
            records, plog = expected["records"][("t", p)], manager.get_log("t", p)
            if p in recovered:
                assert _contents(plog) == records[:-2]  # truncated before the damaged batch (2 records)
            else:
                assert plog.log_end_offset == records[-1][0] + 1  # trusted after the clean shutdown, not re-read
        assert manager.get_log("t", 0).leader_epoch_entries == [(1, 0), (3, 6)]
    finally:
        manager.shutdown()


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "leader-epoch"])
def test_an_empty_offset_checkpoint_has_no_entries_and_no_warning(tmp_path, clock, caplog, kind):
    # Kafka creates its offset checkpoints empty: a Kafka log dir holds a 0-byte cleaner-offset-checkpoint
    # until the cleaner's first pass (found by tests/compat/test_migration.py)
    log_dir = tmp_path / "d"
    expected = _populate(log_dir, clock, clean=True)
    path = KINDS[kind](log_dir)
    path.write_bytes(b"")
    assert read_offset_checkpoint(path) == {}
    caplog.set_level(logging.WARNING, logger="kafkalog.log")
    manager = LogManager([log_dir], LogConfig(), time=clock)
    manager.load()
    try:
        assert _warnings_naming(caplog, path) == []
        for key, records in expected["records"].items():
            assert _contents(manager.get_log(*key)) == records
    finally:
        manager.shutdown()
