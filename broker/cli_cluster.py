"""``kafkalog cluster up`` helpers: stable ports per data dir, watching the brokers, restarting one.

Ports: ``<data dir>/ports.properties`` records the ports of the last run (Java properties syntax)::

    zookeeper.port=2181
    broker.1.port=9092
    broker.2.port=9093

A run on a data dir with this file uses the recorded ports again (so ``bootstrap.servers`` and
``zookeeper.connect`` survive restarts); a recorded port that is now taken by another process is refused in one
line rather than silently moved. A first run takes Kafka's defaults when they are free (ZooKeeper 2181, broker
``i`` 9092 + i - 1), else free ports; ``--base-port`` / ``--zookeeper-port`` choose explicitly (and are then
recorded). A recorded port still held by the previous run's exiting children is waited for up to 5 s.
Brokers beyond those recorded (a run with more ``--brokers``) get new ports the same way.

Watching: while ``cluster up`` runs it checks its broker processes every half second; a broker that exits
is reported as one line on stderr (``kafkalog: broker 2 (127.0.0.1:9093) died: killed by SIGKILL; its log:
...``). With ``--restart-failed`` it is started again at once on the same port and log dir (after 3 failed
restarts in a row it waits 30 s between attempts).

Restarting one broker by hand: ``kafkalog cluster restart-broker --data-dir D --broker N`` writes the request
file ``<data dir>/restart-broker-N`` and waits until the ``cluster up`` that holds the data dir's lock has
restarted broker N (clean SIGTERM shutdown if it is running, then a start) and removed the file; it then
prints ``broker N serving at host:port``. It refuses at once when no ``cluster up`` runs on the data dir.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

PORTS_FILE = "ports.properties"
KAFKA_BROKER_PORT = 9092
ZOOKEEPER_PORT = 2181
RESTART_PREFIX = "restart-broker-"
RESTART_WAIT_S = 120.0
RECORDED_PORT_WAIT_S = 5.0  # a previous run's children (SIGTERMed when it was killed) may still be exiting


class PortError(Exception):
    """A recorded or requested port cannot be used; the message names it."""


def read_ports(data_dir: Path) -> dict[str, int]:
    path = data_dir / PORTS_FILE
    ports: dict[str, int] = {}
    try:
        text = path.read_text()
    except FileNotFoundError:
        return ports
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.lstrip().startswith("#") and value.strip().isdigit():
            ports[key.strip()] = int(value.strip())
    return ports


def write_ports(data_dir: Path, zookeeper_port: int | None, broker_ports: dict[int, int]) -> None:
    lines = ["# ports of the last `kafkalog cluster up` on this data dir; reused by the next one\n"]
    if zookeeper_port is not None:
        lines.append(f"zookeeper.port={zookeeper_port}\n")
    lines += [f"broker.{b}.port={p}\n" for b, p in sorted(broker_ports.items())]
    tmp = data_dir / (PORTS_FILE + ".tmp")
    tmp.write_text("".join(lines))
    os.replace(tmp, data_dir / PORTS_FILE)


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
    from .processes import free_port

    recorded = read_ports(data_dir)
    taken: set[int] = set()

    def pick(key: str, explicit: int | None, default: int) -> int:
        if explicit is not None:
            port = explicit
            if port and not port_free(host, port):
                raise PortError(f"port {port} for {key.split('.port')[0]} is in use")
        elif key in recorded:
            port = recorded[key]
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
    """The ``cluster up`` main loop: watches brokers, serves restart requests, until SIGINT/SIGTERM."""

    def __init__(self, cluster: Any, restart_failed: bool, say: Any) -> None:
        self.cluster = cluster
        self.restart_failed = restart_failed
        self.say = say
        self.failures: dict[int, int] = {}
        self.next_attempt: dict[int, float] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: self.stop.set())
        while not self.stop.wait(0.5):
            self.check_once()

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
        self.say(f"broker {b} serving again at {self.cluster.host}:{self.cluster.ports[b]}")


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
