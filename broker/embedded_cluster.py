"""``EmbeddedCluster``: a real ZooKeeper server plus N broker processes, from Python or ``kafkalog cluster up``.

Each broker is a child process (``python -m broker.cli broker start --config <dir>/server.properties``)
with its own log directory under ``data_dir`` and a fixed port (``broker_ports[id]``, else ``base_port + i``,
else free ports picked once), so a broker restarted with ``start_broker`` comes back at the same address.
With ``metrics`` each broker also serves Prometheus metrics on ``metrics_ports[id]`` (given, else a free port
picked once). With ``schema_registry`` each broker serves Confluent Schema Registry's REST API on
``http://{host}:schema_registry_ports[id]`` (given, else a free port picked once; a ``schema.registry.listeners``
in the broker config wins) and ``schema_registry_url`` lists them all. With ``fault_injection`` (the default) each broker opens its fault-injection control channel on
127.0.0.1:``fault_ports[id]`` (picked free once) and ``faults(id)`` reaches it. ``exited_brokers`` lists brokers whose process ended by itself (``cluster up`` reports them). A broker reports
readiness by printing one line ``kafkalog broker <id> serving on <endpoints>`` on stdout; its log goes to
``<data_dir>/broker-<id>/broker.log``. Children get SIGTERM when the thread that started them dies
(Linux PDEATHSIG).
Without ``zookeeper_connect`` a ZooKeeper server is started under ``data_dir/zookeeper``.

Broker config: ``broker_config`` (every broker), then ``broker_configs[id]`` (one broker; wins). String values
may hold ``{host}``, ``{id}``, ``{port}`` (the broker's port, the one ``bootstrap_servers`` lists) and
``{port1}``, ``{port2}``, ... (more ports of that broker, picked free once and kept across restarts), e.g.
``listeners=CLIENT://{host}:{port},INTERNAL://{host}:{port1}``. Without a ``listeners`` key a broker has one
PLAINTEXT listener on ``{host}:{port}``. When the listener on ``{port}`` is secured, ``client_config`` holds the
client settings (Kafka's names: ``security.protocol``, ``sasl.*``, ``ssl.*``) the cluster's own probes (start-up
membership, ``controller_id``) connect with; ``client_config`` is also what a test hands its clients. ``before_brokers(zookeeper_connect)`` runs once ZooKeeper
serves and before any broker starts (``cluster up --security`` writes the inter-broker SCRAM identity there).

Stop order (``stop``): every broker but the controller's at once (each one's controlled shutdown is served by
the live controller), then the controller's broker (whose own controller has nothing left to move to), then
ZooKeeper. Stopping the controller together with the others would make their controlled shutdowns wait for a
new controller.

Cluster operations (librdkafka's mock cluster's, on real replicated brokers; ``broker.cluster_operations``):
``move_leader``, ``pin_coordinator``, ``broker_down`` / ``broker_up``, each returning once every running broker
shows the change, and the forms that undo on exit: ``broker_stopped``, ``leader_moved``, ``coordinator_pinned``.

Not thread-safe: drive one cluster from one thread.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .processes import death_signal_preexec, free_port

if TYPE_CHECKING:
    from .cluster_operations import ClusterOperations
    from .faults import RemoteFaults

READY_PREFIX = "kafkalog broker "
_PORT_PLACEHOLDER = re.compile(r"\{port(\d*)\}")


def _escape(value: str) -> str:
    """A value as a ``.properties`` line keeps it (backslashes and line breaks escaped)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def _strings(config: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}


class ClusterStartError(RuntimeError):
    """A broker or ZooKeeper did not come up; the message includes the tail of its log."""


class EmbeddedCluster:
    def __init__(
        self,
        brokers: int = 1,
        *,
        data_dir: str | Path | None = None,
        zookeeper_connect: str | None = None,
        zookeeper_port: int = 0,
        base_port: int | None = None,
        broker_ports: Mapping[int, int] | None = None,
        host: str = "127.0.0.1",
        broker_config: Mapping[str, Any] | None = None,
        broker_configs: Mapping[int, Mapping[str, Any]] | None = None,
        client_config: Mapping[str, str] | None = None,
        start_timeout_s: float = 90.0,
        metrics: bool = False,
        metrics_ports: Mapping[int, int] | None = None,
        before_brokers: Callable[[str], None] | None = None,
        fault_injection: bool = True,
        schema_registry: bool = False,
        schema_registry_ports: Mapping[int, int] | None = None,
    ) -> None:
        if brokers < 1:
            raise ValueError(f"a cluster needs at least one broker, not {brokers}")
        self._tmp = None
        if data_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="kafkalog-cluster-")
            data_dir = self._tmp
        self.data_dir = Path(data_dir)
        self.host = host
        self.broker_ids = list(range(1, brokers + 1))
        self._base_port = base_port
        self._zk_port = zookeeper_port
        self._zk_connect = zookeeper_connect
        self._extra = _strings(broker_config or {})
        self._per_broker = {b: _strings(c) for b, c in (broker_configs or {}).items()}
        self.client_config: dict[str, str] = dict(client_config or {})
        """Client settings for the listener on each broker's ``{port}`` (empty: PLAINTEXT)."""
        self._client_security: Any = None
        self.extra_ports: dict[int, dict[int, int]] = {}
        """``{broker id: {n: port}}``: the ports ``{port<n>}`` stood for in that broker's config."""
        self._timeout = start_timeout_s
        self.zookeeper: Any = None
        self.ports: dict[int, int] = dict(broker_ports or {})
        self.metrics_ports: dict[int, int] = dict(metrics_ports or {}) if metrics else {}
        """With ``metrics``: each broker's Prometheus port (``metrics.port``; given, else a free port per broker)."""
        self._metrics = metrics
        self._before_brokers = before_brokers
        self._fault_injection = fault_injection
        self.fault_ports: dict[int, int] = {}
        """With ``fault_injection``: each broker's fault control port on 127.0.0.1 (picked free once; ``faults``)."""
        self._schema_registry = schema_registry
        self.schema_registry_ports: dict[int, int] = dict(schema_registry_ports or {}) if schema_registry else {}
        """With ``schema_registry``: each broker's Schema Registry port (given, else a free port picked once)."""
        self.processes: dict[int, subprocess.Popen] = {}

    # -- addresses ------------------------------------------------------------------------------
    @property
    def zookeeper_connect(self) -> str:
        if self._zk_connect is not None:
            return self._zk_connect
        if self.zookeeper is None:
            raise RuntimeError("the cluster is not started")
        return self.zookeeper.connect_string

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{self.ports[b]}" for b in self.broker_ids)

    @property
    def schema_registry_url(self) -> str | None:
        """Every broker's Schema Registry URL, comma-joined as Confluent's clients take them (fail-over); None
        when no broker serves one. From each broker's ``schema.registry.listeners`` (a wildcard host as the
        cluster's ``host``)."""
        urls = []
        key = "schema.registry.listeners"
        for b in self.broker_ids:
            raw = self._per_broker.get(b, {}).get(key, self._extra.get(key))
            if raw is None and b in self.schema_registry_ports:
                raw = f"http://{{host}}:{self.schema_registry_ports[b]}"
            value = self._substitute(b, raw or "")
            for url in (u.strip() for u in value.split(",") if u.strip()):
                scheme, _, rest = url.partition("://")
                host, _, port = rest.rpartition(":")
                if host in ("", "0.0.0.0", "[::]"):
                    host = self.host
                urls.append(f"{scheme}://{host}:{port}")
        return ",".join(urls) or None

    def broker_dir(self, broker_id: int) -> Path:
        return self.data_dir / f"broker-{broker_id}"

    def broker_log(self, broker_id: int) -> Path:
        return self.broker_dir(broker_id) / "broker.log"

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, progress: Callable[[str], None] | None = None) -> EmbeddedCluster:
        say = progress or (lambda _msg: None)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self._zk_connect is None:
                from .cluster.zookeeper_server import ZooKeeperServer

                say("starting ZooKeeper")
                self.zookeeper = ZooKeeperServer(self.data_dir / "zookeeper", port=self._zk_port)
                self.zookeeper.start()
                say(f"ZooKeeper serving at {self.zookeeper.connect_string}")
            for i, b in enumerate(self.broker_ids):
                if b not in self.ports:
                    self.ports[b] = self._base_port + i if self._base_port else free_port(self.host)
                if self._metrics and b not in self.metrics_ports:
                    self.metrics_ports[b] = free_port(self.host)
                if self._fault_injection and b not in self.fault_ports:
                    self.fault_ports[b] = free_port("127.0.0.1")
                if self._schema_registry and b not in self.schema_registry_ports:
                    self.schema_registry_ports[b] = free_port(self.host)
            if self._before_brokers is not None:
                self._before_brokers(self.zookeeper_connect)
            for b in self.broker_ids:
                self._launch(b)
            for b in self.broker_ids:
                self._await_ready(b)
                metrics = f", metrics at {self.metrics_url(b)}" if b in self.metrics_ports else ""
                say(f"broker {b} serving at {self.host}:{self.ports[b]}{metrics}")
            self._await_membership()
        except BaseException:
            self.stop()
            raise
        return self

    def metrics_url(self, broker_id: int) -> str:
        return f"http://{self.host}:{self.metrics_ports[broker_id]}/metrics"

    def _properties(self, broker_id: int) -> dict[str, str]:
        props = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://{host}:{port}",
            "log.dirs": str(self.broker_dir(broker_id) / "logs"),
            "zookeeper.connect": self.zookeeper_connect,
            "zookeeper.session.timeout.ms": "6000",
        }
        if broker_id in self.metrics_ports:
            props["metrics.port"] = str(self.metrics_ports[broker_id])
        if broker_id in self.fault_ports:
            props["kafkalog.fault.injection.listener"] = f"127.0.0.1:{self.fault_ports[broker_id]}"
        if broker_id in self.schema_registry_ports:
            props["schema.registry.listeners"] = f"http://{{host}}:{self.schema_registry_ports[broker_id]}"
        props.update(self._extra)
        props.update(self._per_broker.get(broker_id, {}))
        return {k: self._substitute(broker_id, v) for k, v in props.items()}

    def _substitute(self, broker_id: int, value: str) -> str:
        """``value`` with ``{host}``, ``{id}``, ``{port}`` and ``{port<n>}`` filled in for ``broker_id``."""

        def port(m: re.Match) -> str:
            if not m.group(1):
                return str(self.ports[broker_id])
            extra = self.extra_ports.setdefault(broker_id, {})
            n = int(m.group(1))
            if n not in extra:
                extra[n] = free_port(self.host)
            return str(extra[n])

        value = _PORT_PLACEHOLDER.sub(port, value)
        return value.replace("{host}", self.host).replace("{id}", str(broker_id))

    def connect(self, broker_id: int, timeout_s: float = 10.0) -> Any:
        """A blocking connection to ``broker_id``'s ``{port}`` listener, secured as ``client_config`` says."""
        from spark_kafkalog.client.network.socket_transport import SocketConnection

        kwargs: dict[str, Any] = {}
        if self.client_config:
            if self._client_security is None:
                from spark_kafkalog.client.network.security import ClientSecurity

                self._client_security = ClientSecurity.from_config(self.client_config)
            kwargs["security"] = self._client_security
        return SocketConnection.open(
            self.host,
            self.ports[broker_id],
            node_id=broker_id,
            connect_timeout=timeout_s,
            request_timeout=timeout_s,
            **kwargs,
        )

    def _launch(self, broker_id: int) -> None:
        d = self.broker_dir(broker_id)
        d.mkdir(parents=True, exist_ok=True)
        cfg = d / "server.properties"
        cfg.touch(mode=0o600)  # it may hold passwords and JAAS configs
        cfg.write_text("".join(f"{k}={_escape(v)}\n" for k, v in self._properties(broker_id).items()))
        logf = open(self.broker_log(broker_id), "ab")
        try:
            self.processes[broker_id] = subprocess.Popen(
                [sys.executable, "-m", "broker.cli", "broker", "start", "--config", str(cfg)],
                stdout=subprocess.PIPE,
                stderr=logf,
                stdin=subprocess.DEVNULL,
                preexec_fn=death_signal_preexec(os.getpid()),
                cwd=str(Path(__file__).resolve().parent.parent),
            )
        finally:
            logf.close()

    def _await_ready(self, broker_id: int) -> None:
        proc = self.processes[broker_id]
        stdout = proc.stdout
        assert stdout is not None, "brokers are started with stdout=PIPE"
        deadline = time.monotonic() + self._timeout
        sel = selectors.DefaultSelector()
        sel.register(stdout, selectors.EVENT_READ)
        line = b""
        try:
            while time.monotonic() < deadline:
                if sel.select(timeout=0.2):
                    line = stdout.readline()
                    if line.decode(errors="replace").startswith(READY_PREFIX):
                        return
                    if not line:
                        break
                elif proc.poll() is not None:
                    break
        finally:
            sel.close()
        raise ClusterStartError(
            f"broker {broker_id} did not start (exit code {proc.poll()}); last lines of "
            f"{self.broker_log(broker_id)}:\n{self._tail(broker_id)}"
        )

    def _await_membership(self) -> None:
        """Wait until every broker's metadata lists every broker, so that what a client asks right after
        ``start`` (a topic with one replica per broker) is judged against the whole cluster."""
        from spark_kafkalog.protocol import API_BY_KEY, ApiKey

        request = API_BY_KEY[ApiKey.METADATA].Request(topics=[], allow_auto_topic_creation=False)
        expected = set(self.broker_ids)
        deadline = time.monotonic() + self._timeout
        for b in self.broker_ids:
            seen: set[int] = set()
            while seen != expected:
                if time.monotonic() > deadline:
                    raise ClusterStartError(f"broker {b} sees brokers {sorted(seen)}, not all of {sorted(expected)}")
                conn = self.connect(b, 10.0)
                try:
                    response = conn.request(ApiKey.METADATA, request, timeout=10.0)
                finally:
                    conn.close()
                seen = {broker.node_id for broker in response.brokers}
                if seen != expected:
                    time.sleep(0.02)

    def _tail(self, broker_id: int, lines: int = 20) -> str:
        try:
            return "\n".join(self.broker_log(broker_id).read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop_broker(self, broker_id: int, timeout_s: float = 30.0) -> int | None:
        """SIGTERM (clean shutdown), then SIGKILL after ``timeout_s``; returns the exit code."""
        proc = self.processes.pop(broker_id, None)
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout:
            proc.stdout.close()
        return proc.returncode

    def exited_brokers(self) -> dict[int, int]:
        """``{broker id: exit code}`` of the broker processes that ended on their own (a crash, a kill from
        outside); they stay listed until ``forget_broker``."""
        return {b: proc.returncode for b, proc in self.processes.items() if proc.poll() is not None}

    def forget_broker(self, broker_id: int) -> None:
        """Drop a broker process that has ended (see ``exited_brokers``), so ``start_broker`` may start it."""
        proc = self.processes.get(broker_id)
        if proc is not None and proc.poll() is not None:
            del self.processes[broker_id]
            if proc.stdout:
                proc.stdout.close()

    def kill_broker(self, broker_id: int) -> None:
        """SIGKILL the broker's process: a crash (no flush, no deregistration).

        Its ``/brokers/ids/<id>`` stays until ZooKeeper expires the dead session, but ``start_broker`` does not
        wait for that: the restarted broker takes over the registration its previous run recorded in its log dir.
        """
        proc = self.processes.pop(broker_id, None)
        if proc is not None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            if proc.stdout:
                proc.stdout.close()

    def start_broker(self, broker_id: int) -> None:
        """Start a stopped or killed broker again on the same log dir and port; returns once it serves."""
        if broker_id in self.processes:
            raise RuntimeError(f"broker {broker_id} is already running")
        self._launch(broker_id)
        self._await_ready(broker_id)

    # -- cluster operations (broker.cluster_operations; docs/fault-injection.md) ---------------------
    def faults(self, broker_id: int) -> RemoteFaults:
        """Request-path fault injection on ``broker_id``'s process (``broker.faults.RemoteFaults``: the
        ``FaultInjector`` methods over its loopback control channel); needs ``fault_injection`` (the default)."""
        from .faults import RemoteFaults

        if broker_id not in self.fault_ports:
            raise ValueError(f"broker {broker_id}: no fault control channel (fault_injection off?)")
        return RemoteFaults(f"127.0.0.1:{self.fault_ports[broker_id]}", broker_id=broker_id)

    @property
    def operations(self) -> ClusterOperations:
        """The cluster operations on this cluster (``broker.cluster_operations.ClusterOperations``)."""
        from .cluster_operations import ClusterOperations

        return ClusterOperations(self)

    def move_leader(self, topic: str, partition: int, broker_id: int, timeout_s: float = 30.0) -> None:
        """Make ``broker_id`` the partition's (preferred) leader; returns once every running broker's Metadata
        names it."""
        self.operations.move_leader(topic, partition, broker_id, timeout_s)

    def pin_coordinator(self, key: str, broker_id: int, *, key_type: str = "group", timeout_s: float = 30.0) -> int:
        """Make ``broker_id`` the coordinator of group id (or, ``key_type="transaction"``, transactional id)
        ``key``; returns the internal topic's partition moved, once every broker's FindCoordinator answers it."""
        return self.operations.pin_coordinator(key, broker_id, key_type=key_type, timeout_s=timeout_s)

    def broker_down(self, broker_id: int, *, clean: bool = True, timeout_s: float = 30.0) -> None:
        """Stop the broker's process (``clean=False``: SIGKILL), keeping its data and port; returns once no
        running broker's Metadata lists it or names it a leader."""
        self.operations.broker_down(broker_id, clean=clean, timeout_s=timeout_s)

    def broker_up(self, broker_id: int, timeout_s: float = 60.0) -> None:
        """Start the broker again; returns once it is in the metadata and the ISRs of its partitions."""
        self.operations.broker_up(broker_id, timeout_s)

    def broker_stopped(
        self, broker_id: int, *, clean: bool = True, timeout_s: float = 60.0
    ) -> AbstractContextManager[None]:
        """``with cluster.broker_stopped(id):`` down inside the block, up after it (also on error)."""
        return self.operations.broker_stopped(broker_id, clean=clean, timeout_s=timeout_s)

    def leader_moved(
        self, topic: str, partition: int, broker_id: int, timeout_s: float = 30.0
    ) -> AbstractContextManager[None]:
        """``with cluster.leader_moved(topic, partition, id):`` ``move_leader`` inside the block; after it the
        replica list is as before and its first replica leads again."""
        return self.operations.leader_moved(topic, partition, broker_id, timeout_s)

    def coordinator_pinned(
        self, key: str, broker_id: int, *, key_type: str = "group", timeout_s: float = 30.0
    ) -> AbstractContextManager[int]:
        """``with cluster.coordinator_pinned(key, id) as partition:`` ``pin_coordinator`` inside the block; after
        it the internal partition's first replica coordinates ``key`` again."""
        return self.operations.coordinator_pinned(key, broker_id, key_type=key_type, timeout_s=timeout_s)

    def kill(self) -> None:
        """SIGKILL every broker and the ZooKeeper server started here: a crash of the whole cluster.

        ``data_dir`` is kept (even a temporary one, until ``stop``): a new ``EmbeddedCluster`` on it comes back
        with every acknowledged record, its brokers taking over the registrations their dead sessions left
        in the restarted ZooKeeper.
        """
        for proc in self.processes.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
        if self.zookeeper is not None and self.zookeeper.pid is not None and self.zookeeper.is_running:
            os.kill(self.zookeeper.pid, signal.SIGKILL)
        for b in list(self.processes):
            self.kill_broker(b)
        if self.zookeeper is not None:
            self.zookeeper.stop()  # reaps the dead JVM
            self.zookeeper = None

    def controller_id(self, timeout_s: float = 2.0) -> int | None:
        """The controller's broker id as a running broker's metadata reports it; None when no broker answers
        within ``timeout_s`` or none names a controller."""
        from spark_kafkalog.client.errors import KafkaClientError
        from spark_kafkalog.protocol import API_BY_KEY, ApiKey

        request = API_BY_KEY[ApiKey.METADATA].Request(topics=[], allow_auto_topic_creation=False)
        for b, proc in list(self.processes.items()):
            if proc.poll() is not None:
                continue
            try:
                conn = self.connect(b, timeout_s)
                try:
                    response = conn.request(ApiKey.METADATA, request, timeout=timeout_s)
                finally:
                    conn.close()
            except (KafkaClientError, OSError):  # a broker that does not answer: ask the next one
                continue
            controller = getattr(response, "controller_id", -1)
            if controller is not None and controller >= 0:
                return int(controller)
        return None

    def stop(self) -> None:
        """Stop the brokers (cleanly, the controller's last; see the module docstring), then ZooKeeper;
        idempotent."""
        running = [b for b, proc in self.processes.items() if proc.poll() is None]
        last = self.controller_id() if len(running) > 1 else None
        first = [b for b in running if b != last]
        for b in first:
            self.processes[b].send_signal(signal.SIGTERM)
        for b in first:
            self.stop_broker(b)
        for b in list(self.processes):  # the controller's broker, and brokers that had exited
            self.stop_broker(b)
        if self.zookeeper is not None:
            self.zookeeper.stop()
            self.zookeeper = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __del__(self) -> None:  # a forgotten cluster must not leave broker processes behind
        procs = getattr(self, "processes", {})
        for proc in procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
