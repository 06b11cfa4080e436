"""``LogSegment``: one ``<base>.log`` file of RecordBatch v2 bytes with its offset and time indexes, and
(only when it holds an ABORT marker) its aborted-transaction index ``<base>.txnindex``.

The ``.log`` file is the batches exactly as appended (offsets assigned, see ``docs/log-format.md``);
the indexes are derived data (see ``index``). A segment knows its size in bytes, its next offset (one
past its last batch), its largest timestamp and the offset of the batch holding it, the broker time of
its first and last append, and how many bytes were appended since the last index entry.

Reading: ``translate_offset`` finds the batch holding an offset (index lookup, then a short scan of
batch headers with ``pread``); ``read`` returns a ``FileRegion`` from there, limited by a byte count and
a maximum position, and always whole first batch when ``min_one_batch``.

Recovery: ``recover`` re-reads the whole file, checks every batch (size within the file, magic 2,
CRC-32C, offsets increasing and within 2^31-1 of the base), truncates the file at the first batch that
fails, and rebuilds both indexes on the way (the ``.txnindex`` is reset: the log rebuilds it while
replaying producer state). ``load`` trusts the file (a clean shutdown) and only checks
the index files, rebuilding them from batch headers when missing or inconsistent.

Descriptors: the ``.log`` file is a ``SharedFile`` opened on demand. Every method that touches the file
pins it (a reference held for the duration, so the process-wide ``OPEN_FILES`` cache cannot close it
meanwhile); ``create``, ``load`` and ``recover`` leave it closed again, so a segment that is never read or
written after start-up holds no descriptor, and used ones are closed again when the cache is full (see
``file_region``). The indexes hold no descriptor: they live in memory and open their files only to flush.

Concurrency: one writer (``append``, ``truncate_to``, ``recover``) and any number of readers on any
thread. ``size`` and ``next_offset`` are updated after the bytes and index entries are in place, so a
reader that takes ``size`` first only ever sees whole batches. Closed or deleted segments keep serving
regions already handed out (see ``file_region``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Generator
from pathlib import Path

from broker.log.errors import CorruptIndexError
from broker.log.file_region import FileRegion, SharedFile
from broker.log.index import OffsetIndex, TimeIndex
from broker.log.transaction_index import TXN_INDEX_SUFFIX, TransactionIndex
from spark_kafkalog.records import CorruptRecordError, decode_batch_records, validate_batch
from spark_kafkalog.records.batch import BATCH_HEADER_SIZE, HEADER_STRUCT, LOG_OVERHEAD, MIN_BATCH_LENGTH, BatchHeader

__all__ = ["LogSegment", "MAX_RELATIVE_OFFSET", "parse_segment_name", "segment_path"]

log = logging.getLogger("kafkalog.log")

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
# Relative offsets are stored as u32 but kept within Kafka's signed 32-bit range, so files stay readable
# by Kafka's tools; a batch that would exceed it goes to a new segment.
MAX_RELATIVE_OFFSET = 0x7FFFFFFF
_RECOVERY_CHUNK = 8 << 20
_unpack_header = HEADER_STRUCT.unpack_from


def segment_path(directory: Path, base_offset: int, suffix: str, extra: str = "") -> Path:
    """``<dir>/<20-digit base offset><suffix><extra>``, e.g. ``00000000000000001000.log``."""
    return directory / f"{base_offset:020d}{suffix}{extra}"


def parse_segment_name(name: str) -> tuple[int, str] | None:
    """``("00000000000000001000.log.deleted")`` -> ``(1000, ".log.deleted")``; None if not a segment file."""
    stem, dot, rest = name.partition(".")
    if not dot or len(stem) != 20 or not stem.isdigit():
        return None
    return int(stem), "." + rest


def _pwrite_all(fd: int, data, position: int) -> None:
    view = memoryview(data)
    written = os.pwrite(fd, view, position)
    while written < len(view):
        view = view[written:]
        position += written
        written = os.pwrite(fd, view, position)


class LogSegment:
    """One segment of a partition log. Create with ``create`` (new, empty) or ``open`` (existing files)."""

    __slots__ = (
        "directory",
        "base_offset",
        "suffix",
        "file",
        "index",
        "time_index",
        "txn_index",
        "size",
        "next_offset",
        "largest_timestamp",
        "offset_of_largest_timestamp",
        "first_append_ms",
        "last_modified_ms",
        "bytes_since_index_entry",
    )

    def __init__(self, directory: Path, base_offset: int, fd: int, suffix: str, now_ms: int) -> None:
        """``fd``: the open ``.log`` file, adopted, or -1 to open it on first use."""
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.file = SharedFile(segment_path(directory, base_offset, LOG_SUFFIX, suffix), fd)
        self.index = OffsetIndex(segment_path(directory, base_offset, INDEX_SUFFIX, suffix))
        self.time_index = TimeIndex(segment_path(directory, base_offset, TIME_INDEX_SUFFIX, suffix))
        self.txn_index = TransactionIndex(segment_path(directory, base_offset, TXN_INDEX_SUFFIX, suffix))
        self.size = 0
        self.next_offset = base_offset
        self.largest_timestamp = -1
        self.offset_of_largest_timestamp = -1
        self.first_append_ms = -1
        self.last_modified_ms = now_ms
        self.bytes_since_index_entry = 0

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path, base_offset: int, now_ms: int, *, suffix: str = "") -> LogSegment:
        """A new empty segment (any existing files of that name are replaced)."""
        path = segment_path(directory, base_offset, LOG_SUFFIX, suffix)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644))
        segment = cls(directory, base_offset, -1, suffix, now_ms)
        segment.index.reset()
        segment.time_index.reset()
        segment.txn_index.reset()
        return segment

    @classmethod
    def open(cls, directory: Path, base_offset: int, now_ms: int, *, suffix: str = "") -> LogSegment:
        """The existing segment files; call ``load`` (trusting the data) or ``recover`` (checking it) next."""
        path = segment_path(directory, base_offset, LOG_SUFFIX, suffix)
        fd = os.open(path, os.O_RDWR)
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        segment = cls(directory, base_offset, fd, suffix, now_ms)
        segment.size = st.st_size
        segment.last_modified_ms = st.st_mtime_ns // 1_000_000
        return segment

    def load(self, index_interval_bytes: int) -> bool:
        """Load indexes and statistics of a cleanly closed segment. Returns False when the data itself
        is inconsistent (a batch header runs past the end), in which case the caller must ``recover``.
        Leaves the file closed (it opens again on first use)."""
        self.file.pin()
        try:
            return self._load(index_interval_bytes)
        finally:
            self.file.release()
            self.file.park()

    def _load(self, index_interval_bytes: int) -> bool:
        try:
            self.index.load(self.size)
            self.time_index.load(MAX_RELATIVE_OFFSET)
            self._load_statistics()
            return True
        except CorruptIndexError as e:
            log.warning("%s: %s; rebuilding the indexes", self.file.path, e)
        except CorruptRecordError:
            return False
        try:
            self.rebuild_indexes(index_interval_bytes)
            return True
        except CorruptRecordError:
            return False

    def _load_statistics(self) -> None:
        """Next offset, largest timestamp and bytes since the last entry, from the indexes plus a short scan."""
        relative, position = self.index.last_entry
        ts, ts_relative = self.time_index.last_entry
        self.largest_timestamp = ts
        self.offset_of_largest_timestamp = self.base_offset + ts_relative if ts_relative >= 0 else -1
        self.next_offset = self.base_offset if relative < 0 else self.base_offset + relative + 1
        if relative >= 0:
            # the indexed batch must really be there, ending at the indexed offset
            header = self._header_at(position)
            if header is None or header.base_offset + header.last_offset_delta != self.base_offset + relative:
                raise CorruptIndexError(f"{self.index.path.name}: last entry does not point at its batch")
        for _, header in self.iter_headers(position):
            self._observe(header)
        # bytes from the last indexed batch (included) to the end, as ``append`` counts them
        self.bytes_since_index_entry = self.size - position

    def _observe(self, header: BatchHeader) -> None:
        last = header.base_offset + header.last_offset_delta
        if header.max_timestamp > self.largest_timestamp:
            self.largest_timestamp = header.max_timestamp
            self.offset_of_largest_timestamp = last
        self.next_offset = last + 1

    # -- batch headers ------------------------------------------------------------------------------
    def _header_at(self, position: int) -> BatchHeader | None:
        """The header at ``position`` (caller pins the file)."""
        data = os.pread(self.file.fd, BATCH_HEADER_SIZE, position)
        if len(data) < BATCH_HEADER_SIZE:
            return None
        return BatchHeader._make(_unpack_header(data))

    def iter_headers(self, start: int = 0, end: int | None = None) -> Generator[tuple[int, BatchHeader], None, None]:
        """``(position, header)`` of each batch from ``start`` to ``end`` (default: ``size``), no CRC check.

        Raises ``CorruptRecordError`` when a header is cut short or a batch runs past ``end``."""
        end = self.size if end is None else end
        if start >= end:
            return
        fd = self.file.pin()
        try:
            pos = start
            while pos < end:
                data = os.pread(fd, BATCH_HEADER_SIZE, pos)
                if len(data) < BATCH_HEADER_SIZE or pos + BATCH_HEADER_SIZE > end:
                    raise CorruptRecordError(f"{self.file.path.name}: batch header cut short", position=pos)
                header = BatchHeader._make(_unpack_header(data))
                size = header.batch_length + LOG_OVERHEAD
                if header.batch_length < MIN_BATCH_LENGTH or pos + size > end or header.magic != 2:
                    raise CorruptRecordError(f"{self.file.path.name}: inconsistent batch header", position=pos)
                yield pos, header
                pos += size
        finally:
            self.file.release()

    def rebuild_indexes(self, index_interval_bytes: int) -> None:
        """Rebuild both indexes and the statistics from batch headers (no CRC check)."""
        self._reset_derived()
        for pos, header in self.iter_headers(0):
            self._index_batch(pos, header, index_interval_bytes)
        self.index.flush()
        self.time_index.flush()

    def _reset_derived(self) -> None:
        self.index.reset()
        self.time_index.reset()
        self.next_offset = self.base_offset
        self.largest_timestamp = -1
        self.offset_of_largest_timestamp = -1
        self.bytes_since_index_entry = 0

    def _index_batch(self, position: int, header: BatchHeader, interval: int) -> None:
        self._observe(header)
        if self.bytes_since_index_entry >= interval:
            self.index.append(header.base_offset + header.last_offset_delta - self.base_offset, position)
            self.time_index.maybe_append(self.largest_timestamp, self.offset_of_largest_timestamp - self.base_offset)
            self.bytes_since_index_entry = 0
        self.bytes_since_index_entry += header.batch_length + LOG_OVERHEAD

    # -- recovery -----------------------------------------------------------------------------------
    def recover(
        self,
        index_interval_bytes: int,
        on_batch: Callable[[BatchHeader], None] | None = None,
        *,
        keep_txn_index: bool = False,
    ) -> int:
        """Check every batch, truncate at the first bad one, rebuild the indexes; returns bytes removed.

        ``on_batch`` sees each valid header (leader epoch cache and producer state are rebuilt from them).
        The ``.txnindex`` is reset (the log rebuilds it when it replays producer state) unless
        ``keep_txn_index`` (a compaction swap being completed: its entries were copied, not replayed).
        Leaves the file closed (it opens again on first use).
        """
        fd = self.file.pin()
        try:
            if not keep_txn_index:
                self.txn_index.reset()
            return self._recover(fd, index_interval_bytes, on_batch)
        finally:
            self.file.release()
            self.file.park()

    def _recover(self, fd: int, index_interval_bytes: int, on_batch: Callable[[BatchHeader], None] | None) -> int:
        self._reset_derived()
        size = os.fstat(fd).st_size
        chunk = b""
        chunk_start = 0
        pos = 0
        next_offset = self.base_offset
        reason = None
        while pos < size:
            if size - pos < BATCH_HEADER_SIZE:
                reason = f"{size - pos} trailing bytes, less than a batch header"
                break
            rel = pos - chunk_start
            if rel + LOG_OVERHEAD > len(chunk):
                chunk, chunk_start, rel = os.pread(fd, _RECOVERY_CHUNK, pos), pos, 0
            batch_length = int.from_bytes(chunk[rel + 8 : rel + 12], "big", signed=True)
            batch_size = batch_length + LOG_OVERHEAD
            if batch_length < MIN_BATCH_LENGTH or pos + batch_size > size:
                reason = f"batch length {batch_length} does not fit the {size - pos} bytes left"
                break
            if rel + batch_size > len(chunk):
                chunk, chunk_start, rel = os.pread(fd, max(_RECOVERY_CHUNK, batch_size), pos), pos, 0
            try:
                header = validate_batch(memoryview(chunk)[rel : rel + batch_size])
            except CorruptRecordError as e:
                reason = str(e)
                break
            last = header.base_offset + header.last_offset_delta
            if header.base_offset < next_offset or last - self.base_offset > MAX_RELATIVE_OFFSET:
                reason = f"batch offsets {header.base_offset}..{last} out of order after {next_offset - 1}"
                break
            next_offset = last + 1
            self._index_batch(pos, header, index_interval_bytes)
            if on_batch is not None:
                on_batch(header)
            pos += batch_size
        removed = size - pos
        if removed:
            log.warning("%s: truncating %d bytes at position %d: %s", self.file.path, removed, pos, reason)
            os.ftruncate(fd, pos)
        self.size = pos
        self.index.flush()
        self.time_index.flush()
        return removed

    # -- append -------------------------------------------------------------------------------------
    def append(self, data, batches, data_start: int, now_ms: int, index_interval_bytes: int) -> None:
        """Write ``data`` (whole batches, offsets assigned) at the end of the file.

        ``batches`` describes them in order as ``(position, size, base offset, last offset, max timestamp)``
        where positions count from ``data_start`` (the position of ``data`` in the caller's buffer).
        An ``OSError`` (disk full) truncates the file back and propagates."""
        start = self.size
        fd = self.file.pin()
        try:
            written = os.pwrite(fd, data, start)
            if written < len(data):
                _pwrite_all(fd, memoryview(data)[written:], start + written)
        except OSError:
            os.ftruncate(fd, start)
            raise
        finally:
            self.file.release()
        base = self.base_offset
        since = self.bytes_since_index_entry
        shift = start - data_start
        for position, size, _, last_offset, max_timestamp in batches:
            if max_timestamp > self.largest_timestamp:
                self.largest_timestamp = max_timestamp
                self.offset_of_largest_timestamp = last_offset
            if since >= index_interval_bytes:
                self.index.append(last_offset - base, position + shift)
                self.time_index.maybe_append(self.largest_timestamp, self.offset_of_largest_timestamp - base)
                since = 0
            since += size
        self.bytes_since_index_entry = since
        if self.first_append_ms < 0:
            self.first_append_ms = now_ms
        self.last_modified_ms = now_ms
        self.next_offset = batches[-1][3] + 1
        self.size = start + len(data)

    def can_fit(self, last_offset: int) -> bool:
        """Whether ``last_offset`` is within the relative-offset range of this segment."""
        return 0 <= last_offset - self.base_offset <= MAX_RELATIVE_OFFSET

    # -- read ---------------------------------------------------------------------------------------
    def translate_offset(self, offset: int, size: int | None = None) -> tuple[int, BatchHeader] | None:
        """``(position, header)`` of the first batch whose last offset is >= ``offset``, looking at the
        first ``size`` bytes (default: all); None when every batch there ends before ``offset``."""
        end = self.size if size is None else size
        _, position = self.index.lookup(offset - self.base_offset)
        if position >= end:
            position = 0
        for pos, header in self.iter_headers(position, end):
            if header.base_offset + header.last_offset_delta >= offset:
                return pos, header
        return None

    def read(
        self, offset: int, max_bytes: int, *, max_position: int | None = None, min_one_batch: bool = True
    ) -> FileRegion | None:
        """A region from the batch holding ``offset``: at most ``max_bytes`` (or its whole first batch
        when ``min_one_batch``), ending at or before ``max_position``. None when no batch here ends at or
        after ``offset`` or nothing fits."""
        size = self.size
        end = size if max_position is None else min(max_position, size)
        found = self.translate_offset(offset, size)
        if found is None:
            return None
        position, header = found
        if position >= end:
            return None
        limit = max_bytes
        if min_one_batch:
            limit = max(limit, header.batch_length + LOG_OVERHEAD)
        length = min(end - position, limit)
        if length <= 0:
            return None
        if not self.file.acquire():
            return None
        return FileRegion(self.file, position, length)

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> tuple[int, int] | None:
        """``(offset, timestamp)`` of the first record at or after ``start_offset`` whose timestamp is
        >= ``timestamp``; None when there is none in this segment."""
        before = self.time_index.lookup_before(timestamp)
        scan_from = max(start_offset, self.base_offset + before + 1 if before >= 0 else self.base_offset)
        found = self.translate_offset(scan_from)
        if found is None:
            return None
        fd = self.file.pin()
        try:
            for pos, header in self.iter_headers(found[0]):
                if header.max_timestamp < timestamp or header.base_offset + header.last_offset_delta < start_offset:
                    continue
                data = os.pread(fd, header.batch_length + LOG_OVERHEAD, pos)
                for record in decode_batch_records(data, header=header):
                    if record.offset >= start_offset and record.timestamp >= timestamp:
                        return record.offset, record.timestamp
            return None
        finally:
            self.file.release()

    def max_timestamp_from(self, start_offset: int) -> tuple[int, int] | None:
        """``(largest timestamp, last offset of its batch)`` over records at or after ``start_offset``."""
        found = self.translate_offset(start_offset)
        if found is None:
            return None
        best = None
        fd = self.file.pin()
        try:
            for pos, header in self.iter_headers(found[0]):
                last = header.base_offset + header.last_offset_delta
                if header.base_offset < start_offset:
                    data = os.pread(fd, header.batch_length + LOG_OVERHEAD, pos)
                    stamps = [
                        r.timestamp for r in decode_batch_records(data, header=header) if r.offset >= start_offset
                    ]
                    ts = max(stamps, default=-1)
                else:
                    ts = header.max_timestamp
                if ts >= 0 and (best is None or ts > best[0]):
                    best = (ts, last)
        finally:
            self.file.release()
        return best

    def batch_at(self, offset: int) -> bytes | None:
        """The bytes of the batch holding ``offset`` (None if there is none)."""
        found = self.translate_offset(offset)
        if found is None or found[1].base_offset > offset:
            return None
        position, header = found
        fd = self.file.pin()
        try:
            return os.pread(fd, header.batch_length + LOG_OVERHEAD, position)
        finally:
            self.file.release()

    # -- truncation, flush, lifecycle ---------------------------------------------------------------
    def truncate_to(self, offset: int) -> int:
        """Remove every batch that ends at or after ``offset``; returns the bytes removed."""
        found = self.translate_offset(offset)
        if found is None:
            return 0
        position = found[0]
        removed = self.size - position
        self.size = min(self.size, position)
        fd = self.file.pin()
        try:
            os.ftruncate(fd, position)
        finally:
            self.file.release()
        self.index.truncate_to_position(position)
        self.time_index.truncate_to(found[1].base_offset - self.base_offset)
        self.txn_index.truncate_to(found[1].base_offset)
        self._reset_statistics_after_truncation()
        return removed

    def _reset_statistics_after_truncation(self) -> None:
        relative, position = self.index.last_entry
        self.next_offset = self.base_offset
        self.largest_timestamp = -1
        self.offset_of_largest_timestamp = -1
        ts, ts_relative = self.time_index.last_entry
        if ts_relative >= 0:
            self.largest_timestamp = ts
            self.offset_of_largest_timestamp = self.base_offset + ts_relative
        if relative >= 0:
            self.next_offset = self.base_offset + relative + 1
        for _, header in self.iter_headers(position):
            self._observe(header)
        self.bytes_since_index_entry = self.size - position
        if self.size == 0:
            self.first_append_ms = -1

    def on_become_inactive(self) -> None:
        """Record the final largest timestamp in the time index and write pending index entries."""
        if self.largest_timestamp >= 0:
            self.time_index.maybe_append(self.largest_timestamp, self.offset_of_largest_timestamp - self.base_offset)
        self.index.flush()
        self.time_index.flush()

    def flush(self) -> None:
        """fsync the data and the index files (a parked file is opened for it: fsync covers the whole file)."""
        if self.file.acquire():
            try:
                os.fsync(self.file.fd)
            finally:
                self.file.release()
        self.index.flush(fsync=True)
        self.time_index.flush(fsync=True)
        self.txn_index.flush()

    def close(self) -> None:
        """Write pending index entries and drop the segment's file reference (regions stay readable)."""
        if not self.file.closed:
            try:
                self.on_become_inactive()
            except FileNotFoundError:
                pass  # files already deleted
        self.file.close()

    @property
    def paths(self) -> list[Path]:
        return [self.file.path, self.index.path, self.time_index.path, self.txn_index.path]

    def change_suffix(self, new_suffix: str) -> None:
        """Rename the three files to ``<base>.<kind><new_suffix>`` (open descriptors stay valid)."""
        self.file.rename(segment_path(self.directory, self.base_offset, LOG_SUFFIX, new_suffix))
        self.index.rename(segment_path(self.directory, self.base_offset, INDEX_SUFFIX, new_suffix))
        self.time_index.rename(segment_path(self.directory, self.base_offset, TIME_INDEX_SUFFIX, new_suffix))
        self.txn_index.rename(segment_path(self.directory, self.base_offset, TXN_INDEX_SUFFIX, new_suffix))
        self.suffix = new_suffix

    def delete_files(self) -> None:
        for path in self.paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    @property
    def last_offset(self) -> int:
        return self.next_offset - 1

    def __repr__(self) -> str:
        return (
            f"LogSegment(base_offset={self.base_offset}, next_offset={self.next_offset}, size={self.size}, "
            f"largest_timestamp={self.largest_timestamp}{', ' + self.suffix if self.suffix else ''})"
        )
