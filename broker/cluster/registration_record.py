"""The registration record: which ZooKeeper session registered this broker last, kept in its first log dir.

A broker killed with SIGKILL (or frozen with the whole cluster) leaves ``/brokers/ids/<id>`` and maybe
``/controller`` behind, owned by its dead session until ZooKeeper expires that session; a ZooKeeper restarted
on its data dir restores the session and starts its expiry clock again. The next run of the same broker on
the same log dir must not wait for that: it reads the record and the registry deletes the nodes whose
``ephemeralOwner`` is the recorded session (compare-and-delete on the node version) before registering.
A node owned by any other session is a genuinely different broker and still gets ``BrokerIdInUseError``.

File ``<first log dir>/zookeeper-registration`` (Java properties, ASCII, replaced atomically)::

    # kafkalog: the ZooKeeper session of this broker's last registration (rewritten at each registration)
    version=1
    cluster.id=NpnrT6BOTomI-wMoIvZGxQ
    broker.id=1
    zookeeper.session.id=0x1000084a1b20003

A record is read or written only while this process holds the exclusive ``flock`` on ``lock_file`` (the
log dir's ``.lock``, taken by ``LogManager.load``; checked in ``/proc/self/fdinfo``, so a lock held by another
process, or a lock file replaced since it was locked, does not count): two live brokers pointed at one log
dir could otherwise delete each other's registration. A record is trusted only for the same cluster id and
broker id. A missing, unreadable or foreign record means "no previous run" (logged with its path); it never
stops the broker.

Thread-safety: ``read``/``write`` may be called from any thread; the registry calls them from its own.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

__all__ = ["RECORD_FILE", "RegistrationRecord", "flock_held_by_this_process"]

log = logging.getLogger("kafkalog.registry")

RECORD_FILE = "zookeeper-registration"
_VERSION = "1"


class RegistrationRecord:
    """The session of the last registration, in ``<log_dir>/zookeeper-registration`` (see the module docstring)."""

    def __init__(self, log_dir: str | os.PathLike, *, lock_file: str | os.PathLike) -> None:
        self.path = Path(log_dir) / RECORD_FILE
        self.lock_file = Path(lock_file)

    def read(self, cluster_id: str, broker_id: int) -> int | None:
        """The session id recorded for ``broker_id`` in ``cluster_id``, or None when there is none to trust."""
        if not self._locked("read"):
            return None
        try:
            text = self.path.read_bytes().decode("ascii")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("%s: unreadable registration record (%s); ignoring it", self.path, exc)
            return None
        fields = {}
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                key, _, value = line.partition("=")
                fields[key.strip()] = value.strip()
        try:
            if fields["version"] != _VERSION:
                raise ValueError(f"version {fields['version']!r} is not {_VERSION}")
            recorded_broker, session = int(fields["broker.id"]), int(fields["zookeeper.session.id"], 16)
            recorded_cluster = fields["cluster.id"]
        except (KeyError, ValueError) as exc:
            log.warning("%s: malformed registration record (%s: %s); ignoring it", self.path, type(exc).__name__, exc)
            return None
        if recorded_cluster != cluster_id or recorded_broker != broker_id:
            log.info(
                "%s: recorded for broker %d of cluster %s, not broker %d of cluster %s; ignoring it",
                self.path,
                recorded_broker,
                recorded_cluster,
                broker_id,
                cluster_id,
            )
            return None
        return session

    def write(self, cluster_id: str, broker_id: int, session_id: int) -> bool:
        """Record ``session_id`` (write a temporary file, fsync, rename); False when it could not be written.

        Skipped unless the log dir is locked. A failure (disk full, no file handles left) is logged and
        never stops a registration: it only means the next run after a crash waits for the dead session.
        """
        if not self._locked("write"):
            return False
        text = (
            "# kafkalog: the ZooKeeper session of this broker's last registration "
            "(rewritten at each registration)\n"
            f"version={_VERSION}\ncluster.id={cluster_id}\nbroker.id={broker_id}\n"
            f"zookeeper.session.id=0x{session_id:x}\n"
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(text.encode("ascii"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning(
                "%s: could not record ZooKeeper session 0x%x (%s); after a crash the next run will "
                "wait for this session to expire",
                self.path,
                session_id,
                exc,
            )
            return False
        return True

    def _locked(self, action: str) -> bool:
        try:
            if flock_held_by_this_process(self.lock_file):
                return True
            reason = "is not locked by this process"
        except OSError as exc:
            reason = f"could not be checked ({exc})"
        log.warning(
            "%s: not %s: %s %s", self.path, "trusted" if action == "read" else "written", self.lock_file, reason
        )
        return False

    def __repr__(self) -> str:
        return f"RegistrationRecord({str(self.path)!r})"


def flock_held_by_this_process(path: str | os.PathLike) -> bool:
    """True when one of this process's open files holds an exclusive ``flock`` on the file now at ``path``.

    Linux: each ``/proc/self/fdinfo/<fd>`` lists the locks held through that open file (``lock: 1: FLOCK
    ADVISORY WRITE ...``). Without ``/proc`` the best available answer is a probe: True when anyone holds it.
    """
    try:
        target = os.stat(path)
    except OSError:
        return False
    if os.path.isdir("/proc/self/fdinfo"):
        for fd in os.listdir("/proc/self/fd"):
            try:
                st = os.stat(f"/proc/self/fd/{fd}")
                if (st.st_dev, st.st_ino) != (target.st_dev, target.st_ino):
                    continue
                with open(f"/proc/self/fdinfo/{fd}") as f:
                    info = f.read()
            except OSError:  # closed in between
                continue
            if any(line.startswith("lock:") and " FLOCK " in line and " WRITE " in line for line in info.splitlines()):
                return True
        return False
    probe = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False
    finally:
        os.close(probe)
