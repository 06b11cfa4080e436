"""``kafkalog dump-log``: Kafka's ``kafka-dump-log.sh`` for kafkalog's segment files (Kafka's on-disk format).

``dump-log --files A.log,B.index,C.timeindex [--print-data-log] [--deep-iteration] [--max-bytes N]``; the
file kind comes from its suffix (``.log``, ``.index``, ``.timeindex``, ``.txnindex``; others are ignored
with a note).

``.log``: one line per batch, with Kafka's field names and order::

    baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1
    partitionLeaderEpoch: 0 isTransactional: false isControl: false position: 0 CreateTime: 1700000000000
    size: 97 magic: 2 compresscodec: none crc: 3473522394 isvalid: true

(on one line). ``--deep-iteration`` adds one ``| offset: ...`` line per record (offset, timestamp, key and
value sizes, sequence, header keys; for control records ``endTxnMarker: COMMIT|ABORT coordinatorEpoch: N``);
``--print-data-log`` (which implies it) adds ``key:`` and ``payload:`` as UTF-8. ``--max-bytes`` stops
reading a log file after that many bytes.

Damage, reported where it is found as kafka-dump-log does: a batch whose CRC-32C does not match prints
``isvalid: false`` and the dump goes on; a batch whose header cannot be read (bad length or magic, a partial
batch at the end) ends the file with ``Found N invalid bytes at the end of F`` plus the position and reason;
records that cannot be decoded print ``| corrupt records: <reason>`` and the dump goes on with the next batch.

``.index`` prints ``offset: O position: P`` per entry, ``.timeindex`` ``timestamp: T offset: O``; then
sanity checks: entries must increase strictly (offsets, positions, timestamps) and, when the segment's
``.log`` is next to the index, lie within it: an offset index entry must point at the start of a batch
ending at its offset, a time index entry's offset must be inside the segment. Problems are listed after the
entries. ``.txnindex`` (aborted transactions) prints one line per entry as Kafka does,
``version: 0 producerId: P firstOffset: F lastOffset: L lastStableOffset: S``, and names trailing bytes
or an unknown version. The exit code is 0 once the files could be read (as Kafka's tool), 1 when one cannot be.

Reads the files only (no lock): dumping a live broker's active segment may show a partial last batch.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path
from typing import Any

from broker.log.index import OffsetIndex, TimeIndex
from broker.log.segment import parse_segment_name
from broker.log.transaction_index import TransactionIndex
from spark_kafkalog.records.batch import LOG_OVERHEAD, MIN_BATCH_LENGTH, parse_batch_header, validate_batch
from spark_kafkalog.records.batch_reader import decode_batch_records
from spark_kafkalog.records.compression import Compression
from spark_kafkalog.records.errors import CorruptRecordError

_CONTROL_KEY = struct.Struct(">hh")  # version, type (0 ABORT, 1 COMMIT)
_CONTROL_VALUE = struct.Struct(">hi")  # version, coordinator epoch


def add_parser(sub: Any) -> None:
    dp = sub.add_parser("dump-log", help="print the batches, records and index entries of segment files")
    dp.add_argument("--files", required=True, help="comma-separated .log, .index, .timeindex and .txnindex files")
    dp.add_argument("--print-data-log", action="store_true", help="print keys and values (implies --deep-iteration)")
    dp.add_argument("--deep-iteration", action="store_true", help="print every record of every batch")
    dp.add_argument("--max-bytes", type=int, default=None, help="read at most this many bytes of each .log file")
    dp.set_defaults(func=cmd_dump_log)


def usage_error(args: argparse.Namespace) -> str | None:
    if not [f for f in args.files.split(",") if f.strip()]:
        return "dump-log --files needs at least one file"
    if args.max_bytes is not None and args.max_bytes < 1:
        return f"--max-bytes must be 1 or more, not {args.max_bytes}"
    return None


def cmd_dump_log(args: argparse.Namespace) -> int:
    files = [Path(f.strip()) for f in args.files.split(",") if f.strip()]
    for path in files:
        if not path.is_file():
            print(f"kafkalog: {path} is not a readable file", file=sys.stderr)
            return 1
    deep = args.deep_iteration or args.print_data_log
    for path in files:
        if path.suffix == ".log":
            dump_log(path, deep=deep, data=args.print_data_log, max_bytes=args.max_bytes)
        elif path.suffix in (".index", ".timeindex"):
            dump_index(path)
        elif path.suffix == ".txnindex":
            dump_txn_index(path)
        else:
            print(f"Ignoring unknown file {path}", file=sys.stderr)
    return 0


def _base_offset(path: Path) -> int:
    parsed = parse_segment_name(path.name)
    return parsed[0] if parsed else 0


def _bool(flag: bool) -> str:
    return "true" if flag else "false"


def dump_log(path: Path, *, deep: bool, data: bool, max_bytes: int | None = None, out: Any = None) -> None:
    out = out or sys.stdout
    buf = path.read_bytes()
    end = len(buf) if max_bytes is None else min(len(buf), max_bytes)
    print(f"Dumping {path}", file=out)
    print(f"Log starting offset: {_base_offset(path)}", file=out)
    pos = 0
    while pos < end:
        problem = _unreadable(buf, pos, end)
        if problem is not None:
            if max_bytes is None or end == len(buf):
                print(
                    f"Found {end - pos} invalid bytes at the end of {path.name} (position {pos}: {problem})", file=out
                )
            break
        h = parse_batch_header(buf, pos)
        size = h.batch_length + LOG_OVERHEAD
        try:
            validate_batch(buf, pos)
            valid = True
        except CorruptRecordError:
            valid = False
        last_seq = -1 if h.base_sequence < 0 else (h.base_sequence + h.last_offset_delta) & 0x7FFFFFFF
        ts_name = "LogAppendTime" if h.timestamp_type else "CreateTime"
        try:
            codec = Compression(h.compression).name.lower()
        except ValueError:
            codec = f"unknown({h.attributes & 7})"
        print(
            f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
            f"baseSequence: {h.base_sequence} lastSequence: {last_seq} producerId: {h.producer_id} "
            f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
            f"isTransactional: {_bool(h.is_transactional)} isControl: {_bool(h.is_control)} position: {pos} "
            f"{ts_name}: {h.max_timestamp} size: {size} magic: {h.magic} compresscodec: {codec} "
            f"crc: {h.crc} isvalid: {_bool(valid)}",
            file=out,
        )
        if deep:
            _dump_records(buf, pos, size, h, ts_name, data, out)
        pos += size


def _unreadable(buf: bytes, pos: int, end: int) -> str | None:
    """Why no batch can be read at ``pos`` (the file's walk ends there), or ``None``."""
    remaining = end - pos
    if remaining < LOG_OVERHEAD + 5:
        return f"{remaining} bytes, less than a batch header"
    batch_length = struct.unpack_from(">i", buf, pos + 8)[0]
    if batch_length < MIN_BATCH_LENGTH:
        return f"batch length {batch_length} is below the minimum {MIN_BATCH_LENGTH}"
    magic = buf[pos + 16]
    if magic != 2:
        return f"magic {magic} where a v2 batch (magic 2) was expected"
    if batch_length + LOG_OVERHEAD > remaining:
        return f"partial batch: {remaining} of {batch_length + LOG_OVERHEAD} bytes"
    return None


def _dump_records(buf: bytes, pos: int, size: int, h: Any, ts_name: str, data: bool, out: Any) -> None:
    try:
        records = decode_batch_records(memoryview(buf)[pos : pos + size], header=h)
    except CorruptRecordError as e:
        print(f"| corrupt records: {e}", file=out)
        return
    for r in records:
        seq = -1 if h.base_sequence < 0 else (h.base_sequence + r.offset - h.base_offset) & 0x7FFFFFFF
        line = (
            f"| offset: {r.offset} {ts_name}: {r.timestamp} keySize: {-1 if r.key is None else len(r.key)} "
            f"valueSize: {-1 if r.value is None else len(r.value)} sequence: {seq} "
            f"headerKeys: [{','.join(k for k, _ in r.headers)}]"
        )
        if h.is_control:
            line += " " + _control(r)
        elif data:
            if r.key is not None:
                line += f" key: {bytes(r.key).decode(errors='replace')}"
            line += f" payload: {'' if r.value is None else bytes(r.value).decode(errors='replace')}"
        print(line, file=out)


def _control(record: Any) -> str:
    try:
        _, kind = _CONTROL_KEY.unpack_from(record.key or b"")
    except struct.error:
        return "controlType: unreadable key"
    if kind not in (0, 1):
        return f"controlType: {kind}"
    epoch = "unknown"
    try:
        epoch = str(_CONTROL_VALUE.unpack_from(record.value or b"")[1])
    except struct.error:
        pass
    return f"endTxnMarker: {'COMMIT' if kind == 1 else 'ABORT'} coordinatorEpoch: {epoch}"


def _log_batches(log_path: Path) -> dict[int, Any] | None:
    """``{position: header}`` of the readable batches of the segment next to an index, or ``None``."""
    if not log_path.is_file():
        return None
    buf = log_path.read_bytes()
    batches = {}
    pos = 0
    while pos < len(buf) and _unreadable(buf, pos, len(buf)) is None:
        h = parse_batch_header(buf, pos)
        batches[pos] = h
        pos += h.batch_length + LOG_OVERHEAD
    return batches


def dump_index(path: Path, out: Any = None) -> None:
    out = out or sys.stdout
    base = _base_offset(path)
    raw = path.read_bytes()
    is_time = path.suffix == ".timeindex"
    entry = TimeIndex.ENTRY if is_time else OffsetIndex.ENTRY
    print(f"Dumping {path}", file=out)
    problems = []
    whole = len(raw) - len(raw) % entry.size
    if whole != len(raw):
        problems.append(f"{len(raw) - whole} trailing bytes are not a whole {entry.size}-byte entry")
    entries = list(entry.iter_unpack(raw[:whole]))
    batches = _log_batches(path.with_suffix(".log"))
    last_offset = max((h.last_offset for h in batches.values()), default=base - 1) if batches is not None else None
    previous: tuple[int, int] | None = None
    for n, (a, b) in enumerate(entries):
        if is_time:
            timestamp, offset = a, base + b
            print(f"timestamp: {timestamp} offset: {offset}", file=out)
            key = (timestamp, offset)
        else:
            offset, position = base + a, b
            print(f"offset: {offset} position: {position}", file=out)
            key = (offset, position)
        if previous is not None and (key[0] <= previous[0] or key[1] <= previous[1]):
            names = ("timestamp", "offset") if is_time else ("offset", "position")
            problems.append(
                f"entry {n} ({names[0]} {key[0]}, {names[1]} {key[1]}) does not increase on entry {n - 1} "
                f"({names[0]} {previous[0]}, {names[1]} {previous[1]})"
            )
        previous = key
        if batches is None:
            continue
        if is_time:
            if not base <= offset <= last_offset:
                problems.append(f"entry {n}: offset {offset} is outside the segment ({base}..{last_offset})")
        else:
            header = batches.get(position)
            if header is None:
                problems.append(f"entry {n}: position {position} is not the start of a batch in the segment")
            elif header.last_offset != offset:
                problems.append(
                    f"entry {n}: index offset {offset}, log offset {header.last_offset} at position {position}"
                )
    if batches is None:
        print(f"(no {path.with_suffix('.log').name} next to it: entries not checked against the segment)", file=out)
    if problems:
        print(f"Index problems in {path}:", file=out)
        for p in problems:
            print(f"  {p}", file=out)


def dump_txn_index(path: Path, out: Any = None) -> None:
    """Kafka's ``dumpTxnIndex``: one line per aborted transaction."""
    out = out or sys.stdout
    raw = path.read_bytes()
    entry = TransactionIndex.ENTRY
    print(f"Dumping {path}", file=out)
    whole = len(raw) - len(raw) % entry.size
    for n, (version, pid, first, last, lso) in enumerate(entry.iter_unpack(raw[:whole])):
        if version != 0:
            print(f"entry {n}: unknown version {version}; the rest is not read", file=out)
            return
        print(
            f"version: {version} producerId: {pid} firstOffset: {first} lastOffset: {last} lastStableOffset: {lso}",
            file=out,
        )
    if whole != len(raw):
        print(f"{len(raw) - whole} trailing bytes are not a whole {entry.size}-byte entry", file=out)
