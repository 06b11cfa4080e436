"""Checkpoint files in Kafka's text format, replaced atomically (write temp, fsync, rename, fsync dir).

Offset checkpoints (``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``replication-offset-checkpoint``, ``cleaner-offset-checkpoint``; one per log directory)::

    0                       <- format version
    2                       <- number of entries
    orders 0 1200           <- topic, partition, offset
    orders 1 977

The leader epoch checkpoint (``leader-epoch-checkpoint``, one per partition directory) has the same
version and count lines followed by ``<epoch> <start offset>`` lines.

A reader either returns every entry or raises ``CorruptCheckpointError`` naming the file, the line and
what was wrong: bytes that are not UTF-8, a version other than 0, a count that is not the number of entry
lines (missing or extra lines, blank ones included; one final newline is expected), a number that is not a
decimal integer in the signed 64-bit range, a negative partition, offset or epoch, the same topic-partition
twice, and epochs or start offsets that do not strictly increase. Callers treat such a file as missing (the
log is the truth) after logging the error. A crash during a write leaves the previous file intact (the
temporary ``.tmp`` file is ignored and overwritten next time). Stateless; concurrent writers of the same
path must be serialised by the caller.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from broker.log.errors import LogError

__all__ = [
    "CorruptCheckpointError",
    "atomic_write",
    "fsync_dir",
    "read_epoch_checkpoint",
    "read_offset_checkpoint",
    "write_epoch_checkpoint",
    "write_offset_checkpoint",
]

VERSION = 0
_INT = re.compile(r"-?[0-9]+")
_INT64_MAX = (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1


class CorruptCheckpointError(LogError):
    """A checkpoint file that does not parse; names the file and the line."""


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``data``: write ``path.tmp``, fsync it, rename over ``path``, fsync the dir."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)


def _entry_lines(path: Path) -> list[tuple[int, list[str]]] | None:
    """``[(line number, fields), ...]`` of the entry lines, checked against the version and count lines;
    None when the file does not exist."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CorruptCheckpointError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise CorruptCheckpointError(f"{path}: line {line}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    if len(lines) < 2:
        missing = "count" if lines else "version"
        raise CorruptCheckpointError(f"{path}: line {len(lines) + 1}: the {missing} line is missing ({len(raw)} bytes)")
    if lines[0] != str(VERSION):
        raise CorruptCheckpointError(f"{path}: line 1: unknown checkpoint version {lines[0]!r} (expected {VERSION})")
    count = _number(path, 2, "entry count", lines[1])
    entries = lines[2:]
    if count != len(entries):
        raise CorruptCheckpointError(f"{path}: line 2: says {count} entries but {len(entries)} lines follow")
    return [(number, line.split(" ")) for number, line in enumerate(entries, start=3)]


def _number(path: Path, line: int, what: str, text: str) -> int:
    """``text`` as a non-negative decimal integer within the signed 64-bit range."""
    if not _INT.fullmatch(text):
        raise CorruptCheckpointError(f"{path}: line {line}: {what} {text!r} is not a number")
    value = int(text)
    if value < 0:
        raise CorruptCheckpointError(f"{path}: line {line}: {what} {value} is negative")
    if value > _INT64_MAX:
        raise CorruptCheckpointError(f"{path}: line {line}: {what} {value} does not fit in 64 bits")
    return value


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int] | None:
    """``{(topic, partition): offset}``, or None when the file does not exist. An empty file (0 bytes) has no
    entries: Kafka creates its offset checkpoints empty (``cleaner-offset-checkpoint`` stays so until the
    cleaner's first pass) and reads them so."""
    try:
        if path.stat().st_size == 0:
            return {}
    except OSError:
        pass  # reported by the read below
    entries = _entry_lines(path)
    if entries is None:
        return None
    out: dict[tuple[str, int], int] = {}
    for number, fields in entries:
        if len(fields) != 3 or not fields[0]:
            raise CorruptCheckpointError(
                f"{path}: line {number}: expected 'topic partition offset', got {' '.join(fields)!r}"
            )
        topic = fields[0]
        partition = _number(path, number, "partition", fields[1])
        offset = _number(path, number, "offset", fields[2])
        if partition > _INT32_MAX:
            raise CorruptCheckpointError(f"{path}: line {number}: partition {partition} is out of range")
        if (topic, partition) in out:
            raise CorruptCheckpointError(f"{path}: line {number}: {topic}-{partition} is listed twice")
        out[(topic, partition)] = offset
    return out


def write_offset_checkpoint(path: Path, offsets: Mapping[tuple[str, int], int], *, sync: bool = True) -> None:
    body = [str(VERSION), str(len(offsets))]
    body += [f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())]
    atomic_write(path, ("\n".join(body) + "\n").encode(), sync=sync)


def read_epoch_checkpoint(path: Path) -> list[tuple[int, int]] | None:
    """``[(epoch, start_offset), ...]`` in file order (both strictly increasing), or None when the file
    does not exist."""
    entries = _entry_lines(path)
    if entries is None:
        return None
    out: list[tuple[int, int]] = []
    for number, fields in entries:
        if len(fields) != 2:
            raise CorruptCheckpointError(f"{path}: line {number}: expected 'epoch offset', got {' '.join(fields)!r}")
        epoch = _number(path, number, "epoch", fields[0])
        start = _number(path, number, "start offset", fields[1])
        if epoch > _INT32_MAX:
            raise CorruptCheckpointError(f"{path}: line {number}: epoch {epoch} is out of range")
        if out and (epoch <= out[-1][0] or start <= out[-1][1]):
            raise CorruptCheckpointError(
                f"{path}: line {number}: epoch {epoch} at offset {start} does not follow epoch {out[-1][0]} at "
                f"offset {out[-1][1]} (both must increase)"
            )
        out.append((epoch, start))
    return out


def write_epoch_checkpoint(path: Path, entries: Iterable[tuple[int, int]], *, sync: bool = True) -> None:
    entries = list(entries)
    body = [str(VERSION), str(len(entries))] + [f"{e} {o}" for e, o in entries]
    atomic_write(path, ("\n".join(body) + "\n").encode(), sync=sync)
