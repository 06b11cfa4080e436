"""``kafkalog cluster up`` helpers: stable ports per data dir, watching the brokers, restarting one, stopping.

Ports: ``<data dir>/ports.properties`` records the ports of the last run (Java properties syntax)::

    zookeeper.port=2181
    broker.1.port=9092
    broker.1.metrics.port=40111
    broker.2.port=9093
    broker.2.metrics.port=40112

A run on a data dir with this file uses the recorded ports again (so ``bootstrap.servers`` and
``zookeeper.connect`` survive restarts); a recorded port that is now taken by another process is refused in one
line rather than silently moved. A first run takes Kafka's defaults when they are free (ZooKeeper 2181, broker
``i`` 9092 + i - 1), else free ports; ``--base-port`` / ``--zookeeper-port`` choose explicitly (and are then
recorded). A recorded port still held by the previous run's exiting children is waited for up to 5 s.
Brokers beyond those recorded (a run with more ``--brokers``) get new ports the same way. The metrics ports
(``--metrics``) follow the same rule, a free port on the first run; a run without ``--metrics`` keeps the
recorded ones for the next run with it. The Schema Registry ports (``broker.<id>.schema.registry.port``, on
unless ``--no-schema-registry``) too, Confluent's 8081 + id - 1 on a first run when free.

Processes: while it serves, ``cluster up`` lists its processes in ``<data dir>/pids.properties``
(``cluster.up.pid=``, ``zookeeper.pid=``, ``broker.<id>.pid=``; rewritten when a broker restarts, removed
when it stops). ``cluster up`` holds an exclusive ``flock`` on ``<data dir>/.lock`` (holding its pid) while it
runs: that lock, not the pids file, says whether a cluster runs there.

Watching: while ``cluster up`` runs it checks its broker processes every half second; a broker that exits
is reported as one line on stderr (``kafkalog: broker 2 (127.0.0.1:9093) died: killed by SIGKILL; its log:
...``). With ``--restart-failed`` it is started again at once on the same port and log dir (after 3 failed
restarts in a row it waits 30 s between attempts).

Restarting one broker by hand: ``kafkalog cluster restart-broker --data-dir D --broker N`` writes the request
file ``<data dir>/restart-broker-N`` and waits until the ``cluster up`` that holds the data dir's lock has
restarted broker N (clean SIGTERM shutdown if it is running, then a start) and removed the file; it then
prints ``broker N serving at host:port``. It refuses at once when no ``cluster up`` runs on the data dir.

Stopping from another shell: ``kafkalog cluster stop --data-dir D`` sends SIGINT to the process holding the
lock (what Ctrl-C in its shell does), waits until it has released the lock (it stops every broker but the
controller's with a controlled shutdown, then the controller's broker, then ZooKeeper; see
``EmbeddedCluster.stop``), and prints one line per process stopped. SIGINT also reaches a ``cluster up`` that is
still starting (it undoes its start) or a ``zookeeper start`` on that directory. Nothing running there is a
one-line error.

Signals: ``cluster up``'s SIGINT/SIGTERM handler only sets a flag and writes a byte to a pipe that the watch
loop selects on: a handler runs between any two bytecodes of the main thread, so one that took a lock (as
``threading.Event.set`` does) could wait forever for a lock its own thread holds.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .output import announce

PORTS_FILE = "ports.properties"
PIDS_FILE = "pids.properties"
LOCK_FILE = ".lock"
STOP_WAIT_S = 150.0  # brokers get 30 s each to stop before a SIGKILL; ZooKeeper 10 s
KAFKA_BROKER_PORT = 9092
ZOOKEEPER_PORT = 2181
SCHEMA_REGISTRY_PORT = 8081
RESTART_PREFIX = "restart-broker-"
RESTART_WAIT_S = 120.0
RECORDED_PORT_WAIT_S = 5.0  # a previous run's children (SIGTERMed when it was killed) may still be exiting


class PortError(Exception):
    """A recorded or requested port cannot be used; the message names it."""


def read_ports(data_dir: Path) -> dict[str, int]:
    return _read_properties(data_dir / PORTS_FILE)


def _read_properties(path: Path) -> dict[str, int]:
    """The ``key=<integer>`` lines of a properties file (``#`` comments); {} when it does not exist."""
    values: dict[str, int] = {}
    try:
        text = path.read_text()
    except (FileNotFoundError, NotADirectoryError):
        return values
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.lstrip().startswith("#") and value.strip().isdigit():
            values[key.strip()] = int(value.strip())
    return values


def write_ports(
    data_dir: Path,
    zookeeper_port: int | None,
    broker_ports: dict[int, int],
    metrics_ports: dict[int, int] | None = None,
    schema_registry_ports: dict[int, int] | None = None,
) -> None:
    """Record this run's ports; a broker of this run without a metrics (Schema Registry) port keeps its recorded
    one."""
    recorded = read_ports(data_dir)
    metrics = {b: recorded[f"broker.{b}.metrics.port"] for b in broker_ports if f"broker.{b}.metrics.port" in recorded}
    metrics.update(metrics_ports or {})
    registry_key = "broker.{}.schema.registry.port"
    registries = {b: recorded[registry_key.format(b)] for b in broker_ports if registry_key.format(b) in recorded}
    registries.update(schema_registry_ports or {})
    lines = ["# ports of the last `kafkalog cluster up` on this data dir; reused by the next one\n"]
    if zookeeper_port is not None:
        lines.append(f"zookeeper.port={zookeeper_port}\n")
    for b, port in sorted(broker_ports.items()):
        lines.append(f"broker.{b}.port={port}\n")
        if b in metrics:
            lines.append(f"broker.{b}.metrics.port={metrics[b]}\n")
        if b in registries:
            lines.append(f"{registry_key.format(b)}={registries[b]}\n")
    _write_atomically(data_dir / PORTS_FILE, "".join(lines))


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _wait_free(host: str, port: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not port_free(host, port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.25)
    return True


def choose_ports(
    data_dir: Path, brokers: int, host: str, base_port: int | None, zookeeper_port: int | None, own_zookeeper: bool
) -> tuple[int | None, dict[int, int]]:
    """``(zookeeper port or None, {broker id: port})`` as the module docstring says; raises ``PortError``."""
    from ..processes import free_port

    recorded = read_ports(data_dir)
    taken: set[int] = set()

    def pick(key: str, explicit: int | None, default: int) -> int:
        if explicit is not None:
            port = explicit
            if port and not port_free(host, port):
                raise PortError(f"port {port} for {key.split('.port')[0]} is in use")
        elif key in recorded:
            port = recorded[key]
            if not 1 <= port <= 65535:
                raise PortError(
                    f"port {port} recorded for {key.split('.port')[0]} in {data_dir / PORTS_FILE} is not in 1-65535; "
                    "fix or remove that line, or choose ports with --base-port/--zookeeper-port"
                )
            if not _wait_free(host, port, RECORDED_PORT_WAIT_S):
                raise PortError(
                    f"port {port} recorded for {key.split('.port')[0]} in {data_dir / PORTS_FILE} is in use by "
                    "another process; free it, or choose ports with --base-port/--zookeeper-port"
                )
        elif default not in taken and port_free(host, default):
            port = default
        else:
            port = free_port(host)
        if port:
            taken.add(port)
        return port

    zk = pick("zookeeper.port", zookeeper_port, ZOOKEEPER_PORT) if own_zookeeper else None
    ports = {}
    for b in range(1, brokers + 1):
        explicit = base_port + b - 1 if base_port else None
        ports[b] = pick(f"broker.{b}.port", explicit, KAFKA_BROKER_PORT + b - 1)
    return zk, ports


def choose_metrics_ports(data_dir: Path, brokers: int, host: str, avoid: set[int] | None = None) -> dict[int, int]:
    """``{broker id: metrics port}`` for ``cluster up --metrics``: the recorded port (waited for up to 5 s,
    else ``PortError``), else a free port other than ``avoid`` (the broker and ZooKeeper ports)."""

    def check(b: int, port: int, key: str, taken: set[int]) -> None:
        if not 1 <= port <= 65535:
            raise PortError(
                f"metrics port {port} recorded for broker {b} in {data_dir / PORTS_FILE} is not in 1-65535; "
                f"fix or remove the {key} line"
            )
        if port in taken or not _wait_free(host, port, RECORDED_PORT_WAIT_S):
            raise PortError(
                f"metrics port {port} recorded for broker {b} in {data_dir / PORTS_FILE} is in use by another "
                f"process; free it, or remove the {key} line"
            )

    return _choose_side_ports(data_dir, brokers, host, avoid, "broker.{b}.metrics.port", check, lambda b: None)


def choose_schema_registry_ports(
    data_dir: Path, brokers: int, host: str, avoid: set[int] | None = None
) -> dict[int, int]:
    """``{broker id: Schema Registry port}`` for ``cluster up``: the recorded port (waited for up to 5 s, else
    ``PortError``), else Confluent's default 8081 + id - 1 when free, else a free port other than ``avoid``."""

    def check(b: int, port: int, key: str, taken: set[int]) -> None:
        if not 1 <= port <= 65535 or port in taken or not _wait_free(host, port, RECORDED_PORT_WAIT_S):
            raise PortError(
                f"Schema Registry port {port} recorded for broker {b} in {data_dir / PORTS_FILE} is not usable "
                f"(in use, or not in 1-65535); free it, or remove the {key} line"
            )

    return _choose_side_ports(
        data_dir, brokers, host, avoid, "broker.{b}.schema.registry.port", check, lambda b: SCHEMA_REGISTRY_PORT + b - 1
    )


def _choose_side_ports(
    data_dir: Path,
    brokers: int,
    host: str,
    avoid: set[int] | None,
    key_format: str,
    check_recorded: Callable[[int, int, str, set[int]], None],
    preferred: Callable[[int], int | None],
) -> dict[int, int]:
    """``{broker id: port}`` of one per-broker side listener: the port recorded under ``key_format.format(b=id)``
    (``check_recorded(id, port, key, taken)`` raises ``PortError`` when it is not usable), else
    ``preferred(id)`` when it is a free port not taken, else a free port; no two alike, none in ``avoid``."""
    from ..processes import free_port

    recorded = read_ports(data_dir)
    taken = set(avoid or ())
    ports: dict[int, int] = {}
    for b in range(1, brokers + 1):
        key = key_format.format(b=b)
        wanted = preferred(b)
        if key in recorded:
            port = recorded[key]
            check_recorded(b, port, key, taken)
        elif wanted is not None and wanted not in taken and port_free(host, wanted):
            port = wanted
        else:
            port = free_port(host)
            while port in taken:
                port = free_port(host)
        taken.add(port)
        ports[b] = port
    return ports


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Watcher:
    """The ``cluster up`` main loop: watches brokers, serves restart requests, until SIGINT/SIGTERM.

    ``install_signal_handlers`` (main thread) makes SIGINT/SIGTERM end ``run``; see the module docstring.
    """

    def __init__(self, cluster: Any, restart_failed: bool, say: Any) -> None:
        self.cluster = cluster
        self.restart_failed = restart_failed
        self.say = say
        self.failures: dict[int, int] = {}
        self.next_attempt: dict[int, float] = {}
        self.stopping = False
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.request_stop()

    def request_stop(self) -> None:
        """End ``run`` soon; safe in a signal handler (no lock taken)."""
        self.stopping = True
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass  # the pipe is full (a wake-up is pending anyway) or closed

    def run(self) -> None:
        while not self.stopping:
            select.select([self._wake_r], [], [], 0.5)
            if not self.stopping:
                self.check_once()

    def close(self) -> None:
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def check_once(self) -> None:
        cluster = self.cluster
        for b, code in cluster.exited_brokers().items():
            cluster.forget_broker(b)
            print(
                f"kafkalog: broker {b} ({cluster.host}:{cluster.ports[b]}) died: {_describe_exit(code)}; "
                f"its log: {cluster.broker_log(b)}",
                file=sys.stderr,
                flush=True,
            )
            if self.restart_failed:
                self.next_attempt[b] = 0.0
        for request in sorted(cluster.data_dir.glob(RESTART_PREFIX + "*")):
            suffix = request.name[len(RESTART_PREFIX) :]
            b = int(suffix) if suffix.isdigit() else -1
            if b in cluster.broker_ids:
                self.say(f"restarting broker {b} (requested)")
                cluster.stop_broker(b)
                self._start(b)
            request.unlink(missing_ok=True)
        now = time.monotonic()
        for b, when in list(self.next_attempt.items()):
            if when <= now and b not in cluster.processes:
                self._start(b)

    def _start(self, b: int) -> None:
        try:
            self.cluster.start_broker(b)
        except (OSError, RuntimeError) as e:  # ClusterStartError is a RuntimeError
            self.cluster.forget_broker(b)
            n = self.failures[b] = self.failures.get(b, 0) + 1
            delay = 30.0 if n >= 3 else 1.0
            first = str(e).splitlines()[0]
            retry = f"; next attempt in {delay:.0f} s" if self.restart_failed else ""
            print(f"kafkalog: broker {b} did not restart ({first}){retry}", file=sys.stderr, flush=True)
            if self.restart_failed:
                self.next_attempt[b] = time.monotonic() + delay
            return
        self.failures.pop(b, None)
        self.next_attempt.pop(b, None)
        write_pids(self.cluster)
        self.say(f"broker {b} serving again at {self.cluster.host}:{self.cluster.ports[b]}")


def serve(cluster: Any, restart_failed: bool, say: Any, zookeeper_port: int | None) -> int:
    """``cluster up`` once ``cluster`` has started: record its ports and processes, print
    ``bootstrap.servers=...``, watch it until SIGINT/SIGTERM, then stop it; returns the exit status (0)."""
    watcher = Watcher(cluster, restart_failed, say)
    try:
        watcher.install_signal_handlers()
        registry_ports = getattr(cluster, "schema_registry_ports", None)
        write_ports(cluster.data_dir, zookeeper_port, cluster.ports, cluster.metrics_ports, registry_ports)
        write_pids(cluster)
        announce(f"bootstrap.servers={cluster.bootstrap_servers}")
        registry_url = getattr(cluster, "schema_registry_url", None)
        if registry_url:
            announce(f"schema.registry.url={registry_url}")
        print(f"zookeeper.connect={cluster.zookeeper_connect}", file=sys.stderr, flush=True)
        watcher.run()
    finally:
        print("stopping the cluster", file=sys.stderr, flush=True)
        started = time.monotonic()
        cluster.stop()
        (cluster.data_dir / PIDS_FILE).unlink(missing_ok=True)
        watcher.close()
        print(f"cluster stopped in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)
    return 0


def write_pids(cluster: Any) -> None:
    """``<data dir>/pids.properties``: this process, ZooKeeper (when started here) and the running brokers."""
    lines = [
        "# processes of the `kafkalog cluster up` running on this data dir; removed when it stops\n",
        f"cluster.up.pid={os.getpid()}\n",
    ]
    zookeeper = getattr(cluster, "zookeeper", None)
    if zookeeper is not None and zookeeper.pid is not None:
        lines.append(f"zookeeper.pid={zookeeper.pid}\n")
    lines += [f"broker.{b}.pid={proc.pid}\n" for b, proc in sorted(cluster.processes.items()) if proc.poll() is None]
    _write_atomically(cluster.data_dir / PIDS_FILE, "".join(lines))


def _lock_holder(data_dir: Path) -> int | None:
    """The pid of the process holding ``<data dir>/.lock`` (``cluster up``, ``zookeeper start``), or None
    when no process holds it."""
    lock = data_dir / LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            pass  # held
        else:
            return None
        deadline = time.monotonic() + 2.0
        while True:  # the holder writes its pid right after taking the lock
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            if text.isdigit() or time.monotonic() > deadline:
                return int(text) if text.isdigit() else 0
            time.sleep(0.05)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_cluster(data_dir: Path, timeout_s: float = STOP_WAIT_S) -> list[str]:
    """``cluster stop``: stop the ``cluster up`` (or ``zookeeper start``) running on ``data_dir`` as the module
    docstring says; returns the lines to print (what was stopped); raises ``RuntimeError`` with a one-line
    reason when nothing runs there or it does not stop within ``timeout_s``."""
    holder = _lock_holder(data_dir)
    if holder is None:
        raise RuntimeError(f"nothing to stop: no kafkalog cluster up is running on {data_dir}")
    if not holder:
        raise RuntimeError(f"{data_dir / LOCK_FILE} is locked by a process that did not record its pid")
    pids = _read_properties(data_dir / PIDS_FILE)
    ours = pids.get("cluster.up.pid") == holder
    ports = read_ports(data_dir)
    os.kill(holder, signal.SIGINT)
    deadline = time.monotonic() + timeout_s
    while _lock_holder(data_dir) is not None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the kafkalog process {holder} on {data_dir} did not stop within {timeout_s:.0f} s")
        time.sleep(0.1)
    lines = []
    if ours:
        brokers = sorted(int(k.split(".")[1]) for k in pids if k.startswith("broker.") and k.endswith(".pid"))
        for b in brokers:
            pid = pids[f"broker.{b}.pid"]
            if _alive(pid):
                raise RuntimeError(f"broker {b} (pid {pid}) of the cluster on {data_dir} is still running")
            port = ports.get(f"broker.{b}.port")
            lines.append(f"stopped broker {b} (pid {pid}{f', 127.0.0.1:{port}' if port else ''})")
        if "zookeeper.pid" in pids:
            port = ports.get("zookeeper.port")
            lines.append(f"stopped ZooKeeper (pid {pids['zookeeper.pid']}{f', 127.0.0.1:{port}' if port else ''})")
        lines.append(f"stopped kafkalog cluster up (pid {holder}) on {data_dir}")
    else:  # a cluster up still starting, or a zookeeper start
        lines.append(f"stopped the kafkalog process (pid {holder}) that held {data_dir}")
    return lines


def request_restart(data_dir: Path, broker: int) -> str:
    """``cluster restart-broker``: ask the ``cluster up`` on ``data_dir`` to restart ``broker``; returns the
    line to print; raises ``RuntimeError`` with a one-line reason."""
    lock = data_dir / ".lock"
    if not lock.is_file():
        raise RuntimeError(f"no kafkalog cluster up has run on {data_dir} (no {lock})")
    fd = os.open(lock, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            pass  # locked: a cluster up runs
        else:
            raise RuntimeError(f"no kafkalog cluster up is running on {data_dir}")
    finally:
        os.close(fd)
    ports = read_ports(data_dir)
    if f"broker.{broker}.port" not in ports:
        known = sorted(int(k.split(".")[1]) for k in ports if k.startswith("broker."))
        raise RuntimeError(f"the cluster on {data_dir} has no broker {broker} (brokers: {known})")
    request = data_dir / f"{RESTART_PREFIX}{broker}"
    request.write_text(f"{os.getpid()}\n")
    deadline = time.monotonic() + RESTART_WAIT_S
    while request.exists():
        if time.monotonic() > deadline:
            request.unlink(missing_ok=True)
            raise RuntimeError(f"broker {broker} was not restarted within {RESTART_WAIT_S:.0f} s")
        time.sleep(0.2)
    port = ports[f"broker.{broker}.port"]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2.0).close()
    except OSError as e:
        raise RuntimeError(
            f"broker {broker} was restarted but does not accept connections at port {port}: {e}"
        ) from None
    return f"broker {broker} serving at 127.0.0.1:{port}"
