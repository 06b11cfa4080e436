"""Checkpoint files in Kafka's text format, replaced atomically (write temp, fsync, rename, fsync dir).

Offset checkpoints (``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``replication-offset-checkpoint``, ``cleaner-offset-checkpoint``; one per log directory)::

    0                       <- format version
    2                       <- number of entries
    orders 0 1200           <- topic, partition, offset
    orders 1 977

The leader epoch checkpoint (``leader-epoch-checkpoint``, one per partition directory) has the same
version and count lines followed by ``<epoch> <start offset>`` lines.

A reader either returns every entry or raises ``CorruptCheckpointError``; a crash during a write leaves
the previous file intact (the temporary ``.tmp`` file is ignored and overwritten next time). Stateless;
concurrent writers of the same path must be serialised by the caller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping

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
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        fsync_dir(path.parent)


def _lines(path: Path) -> list[str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    lines = text.splitlines()
    if len(lines) < 2:
        raise CorruptCheckpointError(f"{path}: missing the version and count lines")
    if lines[0].strip() != str(VERSION):
        raise CorruptCheckpointError(f"{path}: unknown checkpoint version {lines[0].strip()!r}")
    try:
        count = int(lines[1])
    except ValueError:
        raise CorruptCheckpointError(f"{path}: line 2: entry count {lines[1]!r} is not a number") from None
    entries = [line for line in lines[2:] if line.strip()]
    if count != len(entries):
        raise CorruptCheckpointError(f"{path}: says {count} entries but holds {len(entries)}")
    return entries


def read_offset_checkpoint(path: Path) -> dict[tuple[str, int], int] | None:
    """``{(topic, partition): offset}``, or None when the file does not exist."""
    entries = _lines(path)
    if entries is None:
        return None
    out: dict[tuple[str, int], int] = {}
    for number, line in enumerate(entries, start=3):
        parts = line.split()
        try:
            topic, partition, offset = parts[0], int(parts[1]), int(parts[2])
            if len(parts) != 3:
                raise ValueError
        except (ValueError, IndexError):
            raise CorruptCheckpointError(f"{path}: line {number}: expected 'topic partition offset', got {line!r}") from None
        out[(topic, partition)] = offset
    return out


def write_offset_checkpoint(path: Path, offsets: Mapping[tuple[str, int], int], *, sync: bool = True) -> None:
    body = [str(VERSION), str(len(offsets))]
    body += [f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())]
    atomic_write(path, ("\n".join(body) + "\n").encode(), sync=sync)


def read_epoch_checkpoint(path: Path) -> list[tuple[int, int]] | None:
    """``[(epoch, start_offset), ...]`` in file order, or None when the file does not exist."""
    entries = _lines(path)
    if entries is None:
        return None
    out = []
    for number, line in enumerate(entries, start=3):
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            out.append((int(parts[0]), int(parts[1])))
        except ValueError:
            raise CorruptCheckpointError(f"{path}: line {number}: expected 'epoch offset', got {line!r}") from None
    return out


def write_epoch_checkpoint(path: Path, entries: Iterable[tuple[int, int]], *, sync: bool = True) -> None:
    entries = list(entries)
    body = [str(VERSION), str(len(entries))] + [f"{e} {o}" for e, o in entries]
    atomic_write(path, ("\n".join(body) + "\n").encode(), sync=sync)
