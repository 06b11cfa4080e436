"""``LogManager``: every partition log under ``log.dirs``, their checkpoints, and the background tasks.

Layout of each log directory::

    <log.dir>/
      .lock                               flock'ed while a LogManager owns the directory
      .kafka_cleanshutdown                written by shutdown(), removed after the next load
      recovery-point-offset-checkpoint    offsets below which each log was fsynced
      log-start-offset-checkpoint         each log's start offset (retention, DeleteRecords)
      replication-offset-checkpoint       each log's high watermark
      cleaner-offset-checkpoint           each compacted log's first dirty offset
      <topic>-<partition>/                one PartitionLog
      <topic>-<partition>.<id>-delete/    a deleted log, removed by the background thread; <id> is 32 hex
                                          digits and <topic> is cut short so the name fits in 255 bytes

``load()`` opens every partition directory of every log dir in parallel (``recovery_threads``); without
the clean-shutdown marker the logs are recovered from their recovery points. A checkpoint file that cannot
be read or parsed is treated as missing, with a warning naming it and the reason: a log without a
checkpointed recovery point is recovered in full, the other offsets fall back to the log start (a
partition's unreadable ``leader-epoch-checkpoint`` likewise makes ``PartitionLog.open`` recover that log
in full). An offset beyond the log end (a damaged or copied file) never hides or deletes a record: it is
ignored or clamped with a warning naming the file (see ``PartitionLog.open``). ``-delete`` directories left by a previous run are removed. New partitions go to the log dir
holding the fewest. ``start()`` runs one background thread for retention
(``log.retention.check.interval.ms``), flushing (rolled segments, and ``flush.ms``; checked every
``min(log.flush.scheduler.interval.ms, 1 s)``), compaction (``log.cleaner.backoff.ms``, when
``log.cleaner.enable``), checkpoints (``log.flush.offset.checkpoint.interval.ms``) and deleting removed
logs. ``shutdown()`` stops it, closes (flushes) every log, writes the checkpoints and the marker.

Thread-safety: every public method may be called from any thread. ``get_log``/``all_logs`` never block;
``get_or_create_log``/``delete_log``/``update_topic_config`` take the manager's lock briefly; the
maintenance methods (``run_retention_once``, ``run_cleaner_once``, ``flush_dirty``, ``write_checkpoints``)
are serialised with each other by a task lock, whether the background thread or a test calls them.
Appends and reads go straight to the ``PartitionLog`` (see its contract).
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import threading
import time as _time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from broker.log.checkpoint import CorruptCheckpointError, read_offset_checkpoint, write_offset_checkpoint
from broker.log.cleaner import CleanerStats, clean_log
from broker.log.clock import SYSTEM_CLOCK, Clock
from broker.log.config import LogConfig
from broker.log.errors import LogError
from broker.log.partition_log import PartitionLog, parse_partition_dir
from spark_kafkalog.protocol.topic_name import topic_name_problem

__all__ = ["LogManager"]

log = logging.getLogger("kafkalog.log")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
LOCK_FILE = ".lock"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_CHECKPOINT = "replication-offset-checkpoint"
CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
DELETE_DIR_SUFFIX = "-delete"
#: the longest file name the log store creates (Kafka's limit too; ext4, xfs and most others allow 255 bytes)
MAX_FILE_NAME_BYTES = 255
#: ``<topic or its prefix>-<partition>.<hex id>-delete``, as written by ``delete_dir_name`` (and Kafka)
_DELETE_DIR = re.compile(r".+-[0-9]+\.[0-9a-f]+" + re.escape(DELETE_DIR_SUFFIX))
_CHECKPOINT_FALLBACKS = {
    RECOVERY_POINT_CHECKPOINT: "its logs are recovered in full",
    LOG_START_CHECKPOINT: "log start offsets fall back to each log's first segment",
    REPLICATION_CHECKPOINT: "high watermarks fall back to the log start",
    CLEANER_CHECKPOINT: "compacted logs are cleaned again from their start",
}
#: the ``PartitionLog.open`` parameter each offset checkpoint feeds
_CHECKPOINT_PARAMETERS = {
    RECOVERY_POINT_CHECKPOINT: "recovery_point",
    LOG_START_CHECKPOINT: "log_start_offset",
    REPLICATION_CHECKPOINT: "high_watermark",
    CLEANER_CHECKPOINT: "first_dirty_offset",
}
_MAX_TICK_S = 1.0

Key = tuple[str, int]


def delete_dir_name(topic: str, partition: int, unique_id: str | None = None) -> str:
    """``<topic>-<partition>.<id>-delete`` with the topic cut to the prefix that keeps the name within
    ``MAX_FILE_NAME_BYTES`` (Kafka's ``logDeleteDirName``): a 249-character topic would otherwise make a
    291-byte name. ``unique_id`` defaults to a random UUID's 32 hex digits; topic names are ASCII."""
    suffix = f"-{partition}.{unique_id or uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"
    return topic[: MAX_FILE_NAME_BYTES - len(suffix)] + suffix


def is_delete_dir_name(name: str) -> bool:
    """Whether ``name`` is a deleted log's directory (see ``delete_dir_name``)."""
    return _DELETE_DIR.fullmatch(name) is not None


class LogManager:
    def __init__(
        self,
        log_dirs: Sequence[Path | str],
        defaults: LogConfig,
        *,
        time: Clock = SYSTEM_CLOCK,
        recovery_threads: int | None = None,
    ) -> None:
        if not log_dirs:
            raise LogError("at least one log directory is needed")
        self.log_dirs = [Path(d).absolute() for d in log_dirs]
        if len(set(self.log_dirs)) != len(self.log_dirs):
            raise LogError(f"log directories listed twice: {[str(d) for d in log_dirs]}")
        self.defaults = defaults
        self._time = time
        self._recovery_threads = recovery_threads or defaults.recovery_threads_per_data_dir * len(self.log_dirs)
        self._logs: dict[Key, PartitionLog] = {}
        self._dir_of: dict[Key, Path] = {}
        self._topic_configs: dict[str, LogConfig] = {}
        self._lock = threading.RLock()
        self._task_lock = threading.Lock()
        self._dir_locks: list[int] = []
        self._deleted_dirs: list[Path] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._loaded = False
        self._shut_down = False
        #: per log dir, whether the last load found the clean-shutdown marker
        self.had_clean_shutdown: dict[Path, bool] = {}

    # -- loading ------------------------------------------------------------------------------------
    def load(self, topic_configs: Mapping[str, LogConfig] | None = None) -> None:
        """Open (recovering when needed) every partition log of every log dir, in parallel."""
        if self._loaded:
            return
        self._topic_configs.update(topic_configs or {})
        jobs: list[tuple[Path, Path, str, int, bool, dict]] = []
        for log_dir in self.log_dirs:
            log_dir.mkdir(parents=True, exist_ok=True)
            self._lock_dir(log_dir)
            clean = (log_dir / CLEAN_SHUTDOWN_FILE).exists()
            self.had_clean_shutdown[log_dir] = clean
            checkpoints = self._read_checkpoints(log_dir)
            for entry in sorted(os.listdir(log_dir)):
                path = log_dir / entry
                if not path.is_dir():
                    continue
                if is_delete_dir_name(entry):
                    self._deleted_dirs.append(path)
                    continue
                parsed = parse_partition_dir(entry)
                if parsed is None:
                    log.warning("%s: not a <topic>-<partition> directory; ignored", path)
                    continue
                offsets = {name: (values or {}).get(parsed) for name, values in checkpoints.items()}
                # no recovery point known (file missing or unreadable, or no entry): check the whole log
                recover = not clean or offsets[RECOVERY_POINT_CHECKPOINT] is None
                jobs.append((log_dir, path, parsed[0], parsed[1], recover, offsets))
        started = _time.monotonic()

        def open_one(job) -> tuple[Key, Path, PartitionLog]:
            log_dir, path, topic, partition, recover, offsets = job
            plog = PartitionLog.open(
                path,
                self.config_for(topic),
                time=self._time,
                recover=recover,
                recovery_point=offsets[RECOVERY_POINT_CHECKPOINT],
                log_start_offset=offsets[LOG_START_CHECKPOINT],
                high_watermark=offsets[REPLICATION_CHECKPOINT],
                first_dirty_offset=offsets[CLEANER_CHECKPOINT],
                checkpoint_files={key: log_dir / name for name, key in _CHECKPOINT_PARAMETERS.items()},
            )
            return (topic, partition), log_dir, plog

        with ThreadPoolExecutor(max_workers=max(1, self._recovery_threads), thread_name_prefix="log-recovery") as pool:
            results = list(pool.map(open_one, jobs))
        with self._lock:
            for key, log_dir, plog in results:
                if key in self._logs:
                    raise LogError(f"{key[0]}-{key[1]} exists in both {self._dir_of[key]} and {log_dir}")
                self._logs[key] = plog
                self._dir_of[key] = log_dir
        for log_dir in self.log_dirs:
            (log_dir / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
        self._loaded = True
        self.write_checkpoints()
        log.info(
            "loaded %d logs from %d log dirs in %.2f s", len(results), len(self.log_dirs), _time.monotonic() - started
        )

    def _lock_dir(self, log_dir: Path) -> None:
        fd = os.open(log_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise LogError(f"{log_dir} is in use by another broker (could not lock {LOCK_FILE})") from None
        self._dir_locks.append(fd)

    @staticmethod
    def _read_checkpoints(log_dir: Path) -> dict[str, dict[Key, int] | None]:
        """Each offset checkpoint of ``log_dir``: its entries, or None when missing or unreadable."""
        out: dict[str, dict[Key, int] | None] = {}
        for name, fallback in _CHECKPOINT_FALLBACKS.items():
            try:
                out[name] = read_offset_checkpoint(log_dir / name)
            except CorruptCheckpointError as e:
                log.warning("%s; treating the checkpoint as missing: %s", e, fallback)
                out[name] = None
        return out

    # -- logs ---------------------------------------------------------------------------------------
    def config_for(self, topic: str) -> LogConfig:
        return self._topic_configs.get(topic, self.defaults)

    def get_log(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def all_logs(self) -> list[PartitionLog]:
        return list(self._logs.values())

    def log_dir_of(self, topic: str, partition: int) -> Path | None:
        return self._dir_of.get((topic, partition))

    def get_or_create_log(self, topic: str, partition: int, config: LogConfig | None = None) -> PartitionLog:
        """The log of ``topic``-``partition``, created empty in the least-used log dir if missing.
        A given ``config`` becomes the topic's config (also for an existing log); without one a new log
        gets the topic's known config or the defaults."""
        problem = topic_name_problem(topic)
        if problem is not None:
            raise LogError(f"illegal topic name {topic!r}: {problem}")
        if partition < 0:
            raise LogError(f"illegal partition {partition}")
        if len(topic) + 1 + len(str(partition)) > MAX_FILE_NAME_BYTES:
            raise LogError(
                f"partition {partition} of the {len(topic)}-character topic {topic[:20]}... would need a "
                f"directory name longer than {MAX_FILE_NAME_BYTES} bytes"
            )
        with self._lock:
            if config is not None:
                self._topic_configs[topic] = config
            existing = self._logs.get((topic, partition))
            if existing is not None:
                if config is not None and existing.config != config:
                    existing.update_config(config)
                return existing
            counts = {d: 0 for d in self.log_dirs}
            for d in self._dir_of.values():
                counts[d] += 1
            log_dir = min(self.log_dirs, key=lambda d: (counts[d], self.log_dirs.index(d)))
            log_dir.mkdir(parents=True, exist_ok=True)
            plog = PartitionLog.open(
                log_dir / f"{topic}-{partition}", self.config_for(topic), time=self._time, recover=False
            )
            self._logs[(topic, partition)] = plog
            self._dir_of[(topic, partition)] = log_dir
            log.info("created log %s-%d in %s", topic, partition, log_dir)
            return plog

    def delete_log(self, topic: str, partition: int) -> bool:
        """Remove the log: close it, rename its directory to ``delete_dir_name(topic, partition)`` and
        delete that soon (the background thread, or the next maintenance call); if the rename fails, the
        directory is deleted at once. False when there is no such log. Raises ``LogError`` when the
        directory can be neither renamed nor deleted."""
        with self._lock:
            plog = self._logs.pop((topic, partition), None)
            log_dir = self._dir_of.pop((topic, partition), None)
        if plog is None or log_dir is None:
            return False
        plog.close(flush=False)
        target = log_dir / delete_dir_name(topic, partition)
        try:
            os.rename(plog.dir, target)
        except FileNotFoundError:
            return True
        except OSError as e:
            log.warning("%s: cannot rename it to %s (%s); deleting it in place", plog.dir, target.name, e)
            try:
                shutil.rmtree(plog.dir)
            except OSError as e2:
                raise LogError(f"{plog.dir}: deleted log could be neither renamed nor removed: {e2}") from e2
            return True
        with self._lock:
            self._deleted_dirs.append(target)
        self._wake.set()
        return True

    def update_topic_config(self, topic: str, config: LogConfig) -> None:
        """Use ``config`` for the topic's existing logs and for partitions created later."""
        with self._lock:
            self._topic_configs[topic] = config
            logs = [plog for (t, _), plog in self._logs.items() if t == topic]
        for plog in logs:
            plog.update_config(config)

    # -- maintenance --------------------------------------------------------------------------------
    def run_retention_once(self) -> int:
        """Retention on every log (and removal of deleted logs' directories); returns segments deleted."""
        with self._task_lock:
            deleted = 0
            for plog in self.all_logs():
                if not plog.closed:
                    deleted += plog.delete_old_segments()
            self._purge_deleted_dirs()
            return deleted

    def run_cleaner_once(self, *, force: bool = False) -> list[CleanerStats]:
        """Compact every compacted log whose dirty ratio reached ``min.cleanable.dirty.ratio``."""
        with self._task_lock:
            out = []
            now = self._time.milliseconds()
            for plog in self.all_logs():
                if "compact" in plog.config.cleanup_policy and not plog.closed:
                    stats = clean_log(plog, now, force=force)
                    if stats is not None:
                        out.append(stats)
            return out

    def flush_dirty(self) -> int:
        """fsync rolled segments, and logs whose unflushed data is older than ``flush.ms``; returns how many."""
        with self._task_lock:
            now = self._time.milliseconds()
            flushed = 0
            for plog in self.all_logs():
                if not plog.closed and plog.needs_flush(now):
                    plog.flush_if_due(now)
                    flushed += 1
            return flushed

    def write_checkpoints(self) -> None:
        """Write the four offset checkpoint files of every log dir (atomically)."""
        with self._task_lock:
            self._write_checkpoints()

    def _write_checkpoints(self) -> None:
        with self._lock:
            items = [(key, self._dir_of[key], plog) for key, plog in self._logs.items()]
        for log_dir in self.log_dirs:
            logs = [(key, plog) for key, d, plog in items if d == log_dir]
            files: dict[str, Callable[[PartitionLog], int]] = {
                RECOVERY_POINT_CHECKPOINT: lambda p: p.recovery_point,
                LOG_START_CHECKPOINT: lambda p: p.log_start_offset,
                REPLICATION_CHECKPOINT: lambda p: p.high_watermark,
                CLEANER_CHECKPOINT: lambda p: p.first_dirty_offset,
            }
            for name, getter in files.items():
                write_offset_checkpoint(log_dir / name, {key: getter(plog) for key, plog in logs})

    def _purge_deleted_dirs(self) -> None:
        with self._lock:
            doomed, self._deleted_dirs = self._deleted_dirs, []
        for path in doomed:
            try:
                shutil.rmtree(path)
            except FileNotFoundError:
                pass
            except OSError as e:
                log.warning("%s: cannot delete it (%s); the next start tries again", path, e)
                continue
            log.info("deleted %s", path)

    # -- background thread --------------------------------------------------------------------------
    def start(self) -> None:
        """Start the background thread (retention, flush, cleaner, checkpoints, log deletion)."""
        if self._thread is not None or self._shut_down:
            return
        if not self._loaded:
            self.load()
        self._thread = threading.Thread(target=self._run, name="log-manager", daemon=True)
        self._thread.start()

    def _tasks(self) -> list[tuple[float, Callable[[], object]]]:
        d = self.defaults
        tasks: list[tuple[float, Callable[[], object]]] = [
            (d.retention_check_interval_ms / 1000, self.run_retention_once),
            (min(d.flush_scheduler_interval_ms / 1000, _MAX_TICK_S), self.flush_dirty),
            (d.flush_offset_checkpoint_interval_ms / 1000, self.write_checkpoints),
        ]
        if d.cleaner_enable:
            tasks.append((d.cleaner_backoff_ms / 1000, self.run_cleaner_once))
        return tasks

    def _run(self) -> None:
        tasks = self._tasks()
        now = _time.monotonic()
        due = [now + interval for interval, _ in tasks]
        while not self._stop.is_set():
            timeout = max(0.0, min(min(due) - _time.monotonic(), _MAX_TICK_S))
            self._wake.wait(timeout)
            self._wake.clear()
            if self._stop.is_set():
                break
            if self._deleted_dirs:
                self._guarded(self._locked_purge)
            now = _time.monotonic()
            for i, (interval, task) in enumerate(tasks):
                if now >= due[i]:
                    self._guarded(task)
                    due[i] = _time.monotonic() + interval

    def _locked_purge(self) -> None:
        with self._task_lock:
            self._purge_deleted_dirs()

    @staticmethod
    def _guarded(task: Callable[[], object]) -> None:
        try:
            task()
        except Exception:  # noqa: BLE001 - a failing task must not kill the maintenance thread
            log.exception("log maintenance task %s failed", getattr(task, "__name__", task))

    def shutdown(self) -> None:
        """Stop the background thread, close (flush) every log, write checkpoints and the clean-shutdown
        marker, release the directory locks. Idempotent."""
        if self._shut_down:
            return
        self._shut_down = True
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        with self._task_lock:
            for plog in self.all_logs():
                plog.close()
            if self._loaded:
                self._write_checkpoints()
                for log_dir in self.log_dirs:
                    (log_dir / CLEAN_SHUTDOWN_FILE).write_bytes(b"")
            self._purge_deleted_dirs()
        for fd in self._dir_locks:
            os.close(fd)
        self._dir_locks.clear()
        log.info("log manager shut down (%d logs)", len(self._logs))

    def __enter__(self) -> LogManager:
        self.load()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
