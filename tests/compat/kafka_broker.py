"""Apache Kafka brokers as child JVMs: 3.9 in ZooKeeper mode on the project's ZooKeeper, 4.4 as one KRaft node.

``KafkaBroker(peer, data_dir, zookeeper_connect=...)`` writes ``server.properties`` and a logging config into
``data_dir``, formats the storage (KRaft), starts ``java -cp <peer>/* kafka.Kafka server.properties`` with a
small heap on ports the OS picked, and returns once kafkalog's own client gets Metadata naming the broker.
Logs stay in ``data_dir`` (``server.log``, ``stdout.log``); ``log_tail()`` is what tests print on failure.
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from broker.cluster.zookeeper_server import find_java
from broker.processes import death_signal_preexec

from .peers import KAFKA_39, KAFKA_44, Peer, classpath

JVM_OPTIONS = ("-Xmx384m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")

# Settings of a one-broker test cluster: internal topics with one replica, few partitions (fast start), no
# initial rebalance delay (group tests would otherwise wait 3 s per first join).
COMMON_PROPERTIES = {
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "true",
    "delete.topic.enable": "true",
    "log.flush.interval.messages": "9223372036854775807",
}


class KafkaBrokerError(RuntimeError):
    """The broker did not start (the message carries its log's tail)."""


def free_port() -> int:
    """A port the OS picked (bound, then released for the broker)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_properties(path: Path, props: dict[str, str]) -> None:
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


class KafkaBroker:
    """One Apache Kafka broker process (see the module docstring); ``start()``/``stop()`` or a context manager.

    ``peer`` is KAFKA_39 (needs ``zookeeper_connect``, chroot included) or KAFKA_44 (KRaft, combined
    broker+controller node). ``log_dir`` is ``log.dirs`` (default ``data_dir/kafka-logs``; another broker's log
    dir for a migration test). ``extra`` adds or overrides server.properties entries.

    ``listeners`` adds named listeners beside PLAINTEXT (which stays: the readiness check and inter-broker
    traffic use it), e.g. ``{"SASL_SSL": "SASL_SSL", "CLIENT_TLS": "SSL"}`` (name -> security protocol), on
    ports picked at ``start()`` (``listener_port(name)``, ``listener_bootstrap(name)``); their TLS and SASL
    settings (keystores, ``listener.name.<l>.<mechanism>.sasl.jaas.config``, ...) go in ``extra``.
    ``jvm_options`` replaces ``JVM_OPTIONS`` (a small heap, serial GC, C1 only: quick start-ups for tests; a
    benchmark passes Kafka's own production flags). ``run_class(main_class, *args)`` runs a class of the broker's classpath (``kafka.admin.ConfigCommand``
    to add SCRAM users through ZooKeeper).
    """

    def __init__(
        self,
        peer: Peer,
        data_dir: str | os.PathLike,
        *,
        zookeeper_connect: str | None = None,
        broker_id: int = 1,
        log_dir: str | os.PathLike | None = None,
        extra: dict[str, str] | None = None,
        listeners: dict[str, str] | None = None,
        jvm_options: Sequence[str] = JVM_OPTIONS,
    ) -> None:
        if peer not in (KAFKA_39, KAFKA_44):
            raise ValueError(f"not a broker peer: {peer.name}")
        if peer is KAFKA_39 and not zookeeper_connect:
            raise ValueError("Kafka 3.9 runs in ZooKeeper mode: zookeeper_connect is required")
        self.peer = peer
        self.kraft = peer is KAFKA_44
        self.data_dir = Path(data_dir).resolve()
        self.zookeeper_connect = zookeeper_connect
        self.broker_id = broker_id
        self._log_dir = None if log_dir is None else Path(log_dir).resolve()
        self.extra = dict(extra or {})
        self.listeners = dict(listeners or {})
        self.jvm_options = tuple(jvm_options)
        self.listener_ports: dict[str, int] = {}
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.startup_seconds: float | None = None

    @property
    def version(self) -> str:
        return self.peer.name.removeprefix("kafka-")

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def listener_port(self, name: str) -> int:
        return self.listener_ports[name]

    def listener_bootstrap(self, name: str) -> str:
        """``127.0.0.1:<port>`` of the named listener added with ``listeners``."""
        return f"127.0.0.1:{self.listener_ports[name]}"

    def run_class(self, main_class: str, *args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
        """Run ``main_class`` on the broker's classpath; raises ``KafkaBrokerError`` with its output on failure."""
        proc = subprocess.run(
            self._java(main_class, *args), capture_output=True, text=True, timeout=timeout_s, cwd=self.data_dir
        )
        if proc.returncode != 0:
            raise KafkaBrokerError(f"{main_class} {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
        return proc

    @property
    def log_dir(self) -> Path:
        return self._log_dir or self.data_dir / "kafka-logs"

    @property
    def server_log(self) -> Path:
        return self.data_dir / "server.log"

    @property
    def stdout_log(self) -> Path:
        return self.data_dir / "stdout.log"

    def __repr__(self) -> str:
        return f"KafkaBroker({self.version}, {self.bootstrap_servers}, data_dir={str(self.data_dir)!r})"

    def _properties(self) -> dict[str, str]:
        props = dict(COMMON_PROPERTIES)
        props["log.dirs"] = str(self.log_dir)
        listener = f"PLAINTEXT://127.0.0.1:{self.port}"
        if self.kraft:
            controller_port = free_port()
            props |= {
                "process.roles": "broker,controller",
                "node.id": str(self.broker_id),
                "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
                "controller.listener.names": "CONTROLLER",
                "listeners": f"{listener},CONTROLLER://127.0.0.1:{controller_port}",
                "advertised.listeners": listener,
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        else:
            props |= {
                "broker.id": str(self.broker_id),
                "listeners": listener,
                "advertised.listeners": listener,
                "zookeeper.connect": str(self.zookeeper_connect),
                "zookeeper.connection.timeout.ms": "30000",
            }
        if self.listeners:
            named = ",".join(f"{name}://127.0.0.1:{self.listener_ports[name]}" for name in self.listeners)
            protocols = ",".join(f"{name}:{protocol}" for name, protocol in self.listeners.items())
            props["listeners"] = f"{props['listeners']},{named}"
            props["advertised.listeners"] = f"{props['advertised.listeners']},{named}"
            base_map = props.get("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT")
            props["listener.security.protocol.map"] = f"{base_map},{protocols}"
            props["inter.broker.listener.name"] = "PLAINTEXT"
        return props | self.extra

    def _logging_options(self) -> list[str]:
        if self.kraft:  # log4j2 (Kafka 4)
            config = self.data_dir / "log4j2.properties"
            config.write_text(
                "appender.file.type = File\n"
                "appender.file.name = file\n"
                f"appender.file.fileName = {self.server_log}\n"
                "appender.file.layout.type = PatternLayout\n"
                "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
                "rootLogger.level = info\n"
                "rootLogger.appenderRef.file.ref = file\n"
            )
            return [f"-Dlog4j2.configurationFile={config}"]
        config = self.data_dir / "log4j.properties"  # reload4j (Kafka 3.9)
        config.write_text(
            "log4j.rootLogger=INFO, file\n"
            "log4j.appender.file=org.apache.log4j.FileAppender\n"
            f"log4j.appender.file.File={self.server_log}\n"
            "log4j.appender.file.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n\n"
            "log4j.logger.org.apache.zookeeper=WARN\n"
        )
        return [f"-Dlog4j.configuration=file:{config}"]

    def _java(self, main_class: str, *args: str, **popen: object) -> list[str]:
        return [
            find_java(),
            *self.jvm_options,
            *self._logging_options(),
            "-cp",
            classpath(self.peer),
            main_class,
            *args,
        ]

    def _format_storage(self, properties: Path) -> None:
        """``kafka-storage format --standalone`` (KRaft): a new cluster id, this node the only voter."""
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        # one argument: an id starting with "-" (1 in 64) would read as an option after a separate -t
        cmd = self._java(
            "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(properties), "--standalone"
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise KafkaBrokerError(f"Kafka {self.version} storage format failed:\n{proc.stdout}{proc.stderr}")

    def start(self, timeout_s: float = 120.0) -> KafkaBroker:
        """Write the config, format (KRaft), launch, and wait until Metadata from the broker names it."""
        started = time.monotonic()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.listener_ports = {name: free_port() for name in self.listeners}
        properties = self.data_dir / "server.properties"
        _write_properties(properties, self._properties())
        if self.kraft:
            self._format_storage(properties)
        with open(self.stdout_log, "ab") as out:
            self.process = subprocess.Popen(
                self._java("kafka.Kafka", str(properties)),
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=death_signal_preexec(os.getpid()),
            )
        try:
            self._await_serving(started + timeout_s)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _await_serving(self, deadline: float) -> None:
        from spark_kafkalog.client import KafkaClient

        last: BaseException | None = None
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise KafkaBrokerError(f"Kafka {self.version} exited while starting:\n{self.log_tail()}")
            try:
                with KafkaClient(self.bootstrap_servers, request_timeout_ms=3000, connect_timeout_ms=1000) as c:
                    c.refresh_metadata_once(None)
                    if c.broker_address(self.broker_id) is not None:
                        return
            except Exception as exc:  # not listening yet, or no metadata yet (KRaft catching up)
                last = exc
            time.sleep(0.3)
        raise KafkaBrokerError(f"Kafka {self.version} not serving in time (last: {last!r}):\n{self.log_tail()}")

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM (controlled shutdown), SIGKILL after ``timeout_s``; idempotent."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def log_tail(self, limit: int = 4000) -> str:
        """The end of the broker's log and its stdout, for a failure message."""
        parts = []
        for path in (self.server_log, self.stdout_log):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            parts.append(f"--- {path} (tail)\n{text[-limit:]}")
        return "\n".join(parts)

    def __enter__(self) -> KafkaBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
