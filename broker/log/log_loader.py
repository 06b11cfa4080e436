"""Opening a partition directory: clean-up of interrupted operations, segment loading, and crash recovery.

``load_segments`` turns the files of ``<topic>-<partition>/`` into a list of ``LogSegment``s:

1. Left-overs are settled: ``*.deleted`` (segments already removed from the log), ``*.cleaned``
   (an unfinished compaction output) and ``*.tmp`` files are deleted, index files without their ``.log``
   too. A complete ``*.swap`` segment (compaction output that was being swapped in) is checked, replaces
   the segments whose offsets it covers, and is renamed into place.
2. Segments before the one holding the recovery point are trusted (``LogSegment.load``: index sanity
   check, rebuilt when missing or inconsistent). With ``recover`` (an unclean shutdown) the segment holding
   the recovery point and every later one are re-validated batch by batch (``LogSegment.recover``); at the
   first invalid batch that segment is truncated and all later segments are deleted, so exactly the valid
   prefix survives. Without ``recover`` every segment is trusted, except one whose batch headers do not
   add up, which is recovered as above.
3. A segment whose base offset is below the previous segment's next offset (overlap) is treated like a
   corrupt one.

Runs before the log is shared with anyone; not thread-safe.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from broker.log.segment import LOG_SUFFIX, LogSegment, parse_segment_name, segment_path
from broker.log.transaction_index import TXN_INDEX_SUFFIX
from spark_kafkalog.records.batch import BatchHeader

__all__ = ["DELETED_SUFFIX", "CLEANED_SUFFIX", "SWAP_SUFFIX", "load_segments"]

log = logging.getLogger("kafkalog.log")

DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
_INDEX_KINDS = (".index", ".timeindex", TXN_INDEX_SUFFIX)
_KINDS = (LOG_SUFFIX, *_INDEX_KINDS)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _settle_leftovers(directory: Path) -> tuple[list[int], list[int]]:
    """Delete left-over files; returns the base offsets of ``.log`` segments and of ``.log.swap`` segments."""
    bases: set[int] = set()
    swaps: set[int] = set()
    indexes: dict[int, list[Path]] = {}
    for name in os.listdir(directory):
        path = directory / name
        if name.endswith(".tmp"):
            _unlink(path)
            continue
        parsed = parse_segment_name(name)
        if parsed is None:
            continue
        base, suffix = parsed
        if suffix.endswith(DELETED_SUFFIX) or suffix.endswith(CLEANED_SUFFIX):
            _unlink(path)
        elif suffix == LOG_SUFFIX:
            bases.add(base)
        elif suffix == LOG_SUFFIX + SWAP_SUFFIX:
            swaps.add(base)
        elif suffix in _INDEX_KINDS or suffix in tuple(k + SWAP_SUFFIX for k in _INDEX_KINDS):
            indexes.setdefault(base, []).append(path)
    for base, paths in indexes.items():
        for path in paths:
            is_swap = path.name.endswith(SWAP_SUFFIX)
            if (is_swap and base not in swaps) or (not is_swap and base not in bases):
                _unlink(path)
    return sorted(bases), sorted(swaps)


def _complete_swap(directory: Path, base: int, bases: list[int], now_ms: int, interval: int) -> list[int]:
    """Put the swap segment at ``base`` in place of the segments it covers; returns the remaining bases."""
    segment = LogSegment.open(directory, base, now_ms, suffix=SWAP_SUFFIX)
    try:
        segment.recover(interval, keep_txn_index=True)
        end = max(segment.next_offset, base + 1)
    finally:
        segment.close()
    for old in [b for b in bases if base <= b < end]:
        for kind in _KINDS:
            _unlink(segment_path(directory, old, kind))
    for kind in _KINDS:
        swap = segment_path(directory, base, kind, SWAP_SUFFIX)
        if swap.exists():
            os.replace(swap, segment_path(directory, base, kind))
    log.info("%s: completed an interrupted compaction swap at offset %d", directory, base)
    return sorted({b for b in bases if not base <= b < end} | {base})


def load_segments(
    directory: Path,
    *,
    now_ms: int,
    recover: bool,
    recovery_point: int,
    index_interval_bytes: int,
    on_recovered_batch: Callable[[BatchHeader], None] | None = None,
) -> tuple[list[LogSegment], bool]:
    """The directory's segments in offset order, and whether any data was recovered (checked).

    ``on_recovered_batch`` sees every header of every re-validated batch."""
    bases, swaps = _settle_leftovers(directory)
    for base in swaps:
        bases = _complete_swap(directory, base, bases, now_ms, index_interval_bytes)
    segments: list[LogSegment] = []
    recovered = False
    corrupt_from: int | None = None
    # the segment holding the recovery point: the last base at or below it
    first_unflushed = max((b for b in bases if b <= recovery_point), default=bases[0] if bases else 0)
    for i, base in enumerate(bases):
        segment = LogSegment.open(directory, base, now_ms)
        if segments and base < segments[-1].next_offset:
            log.warning("%s: segment %d overlaps the previous one; dropping it and later ones", directory, base)
            segment.close()
            corrupt_from = i
            break
        needs_check = recover and base >= first_unflushed
        if not needs_check and not segment.load(index_interval_bytes):
            log.warning("%s: segment %d is inconsistent; recovering it", segment.file.path, base)
            needs_check = True
        if needs_check:
            recovered = True
            removed = segment.recover(index_interval_bytes, on_recovered_batch)
            segments.append(segment)
            if removed:
                corrupt_from = i + 1
                break
        else:
            segments.append(segment)
    if corrupt_from is not None:
        for base in bases[corrupt_from:]:
            log.warning("%s: deleting segment %d after the truncation point", directory, base)
            for kind in _KINDS:
                _unlink(segment_path(directory, base, kind))
    return segments, recovered
