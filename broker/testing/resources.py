"""What the pytest plugin starts (in-process brokers, clusters of broker processes) and the proof it stopped them.

``KafkalogResources`` is the plugin's session-wide factory (the ``kafkalog_resources`` fixture): it starts
brokers and clusters, keeps the shared ones (session scope), records every listening address and child
process id it ever started, stops everything at the end of the session, and answers ``leftovers()``: the
addresses still accepting connections and the child processes still alive, which must be none once
``stop_all()`` has run. Imports the broker only when something starts.

Concurrency: pytest runs fixtures on one thread; the class is not thread-safe.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from broker.embedded_cluster import EmbeddedCluster
    from broker.server import EmbeddedBroker

__all__ = ["KafkalogResources", "accepts_connections", "process_alive"]


def accepts_connections(address: str, timeout_s: float = 1.0) -> bool:
    """Whether ``host:port`` accepts a TCP connection now."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return True
    except OSError:
        return False


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``/proc/<pid>/stat``; a signal probe elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


class KafkalogResources:
    """Starts brokers and clusters for the plugin's fixtures and stops them all at the end (``stop_all``)."""

    def __init__(self, broker_config: Mapping[str, str], cluster_brokers: int = 3):
        self.broker_config = dict(broker_config)
        """The settings every broker (in process or in a cluster) starts with: the plugin's defaults, the ini
        key and the options merged (``settings.broker_config``)."""
        self.cluster_brokers = cluster_brokers
        self.addresses: list[str] = []
        """Every ``host:port`` a broker started here listened on (kept after it stops, for ``leftovers``)."""
        self.pids: list[int] = []
        """Every child process (cluster broker, ZooKeeper) started here (kept after it stops)."""
        self._brokers: list[EmbeddedBroker] = []
        self._clusters: list[EmbeddedCluster] = []
        self._shared_broker: EmbeddedBroker | None = None
        self._shared_cluster: EmbeddedCluster | None = None

    # -- in-process brokers ---------------------------------------------------------------------
    def start_broker(self, overrides: Mapping[str, str] | None = None) -> EmbeddedBroker:
        """A new in-process broker on 127.0.0.1 port 0 with its own in-memory registry and temporary log dir;
        ``overrides`` (config names) win over ``broker_config``. Stopped by ``stop_broker`` or ``stop_all``."""
        from broker.server import EmbeddedBroker

        config = {**self.broker_config, **(overrides or {})}
        registry = f"memory:kafkalog-pytest-{uuid.uuid4().hex[:12]}"
        settings: dict[str, Any] = config  # config names, which EmbeddedBroker takes as keyword overrides
        broker = EmbeddedBroker(int(settings.pop("broker.id", "0")), zookeeper_connect=registry, **settings)
        broker.start()
        self._brokers.append(broker)
        self.addresses.append(broker.bootstrap_servers)
        return broker

    def shared_broker(self) -> EmbeddedBroker:
        """The session's one broker with ``broker_config`` (started on first use)."""
        if self._shared_broker is None:
            self._shared_broker = self.start_broker()
        return self._shared_broker

    def stop_broker(self, broker: EmbeddedBroker) -> None:
        if broker is self._shared_broker:
            self._shared_broker = None
        if broker in self._brokers:
            self._brokers.remove(broker)
        broker.stop()

    # -- clusters of broker processes -----------------------------------------------------------
    def start_cluster(
        self, brokers: int | None = None, overrides: Mapping[str, str] | None = None, **kwargs: Any
    ) -> EmbeddedCluster:
        """A new ``EmbeddedCluster`` (its own ZooKeeper, ``brokers`` processes, default ``cluster_brokers``) with
        ``cluster_defaults(brokers)``, then ``broker_config``, then ``overrides``; ``kwargs`` go to
        ``EmbeddedCluster``. Stopped by ``stop_cluster`` or ``stop_all``."""
        from broker.embedded_cluster import EmbeddedCluster

        from .settings import cluster_defaults

        n = brokers or self.cluster_brokers
        config = {**cluster_defaults(n), **self.broker_config, **(overrides or {})}
        cluster = EmbeddedCluster(n, broker_config=config, **kwargs)
        self._clusters.append(cluster)
        try:
            cluster.start()
        finally:
            self._record_cluster(cluster)
        return cluster

    def _record_cluster(self, cluster: EmbeddedCluster) -> None:
        addresses = [f"{cluster.host}:{port}" for port in cluster.ports.values()]
        addresses += [f"127.0.0.1:{port}" for port in cluster.fault_ports.values()]
        for address in addresses:
            if address not in self.addresses:
                self.addresses.append(address)
        for proc in cluster.processes.values():
            if proc.pid not in self.pids:
                self.pids.append(proc.pid)
        zk = cluster.zookeeper
        if zk is not None and zk.pid is not None and zk.pid not in self.pids:
            self.pids.append(zk.pid)
            self.addresses.append(zk.connect_string)

    def note_cluster_processes(self, cluster: EmbeddedCluster) -> None:
        """Record the cluster's current child processes (a broker restarted by a test has a new pid)."""
        self._record_cluster(cluster)

    def shared_cluster(self) -> EmbeddedCluster:
        """The session's one cluster (``cluster_brokers`` brokers, started on first use)."""
        if self._shared_cluster is None:
            self._shared_cluster = self.start_cluster()
        return self._shared_cluster

    def stop_cluster(self, cluster: EmbeddedCluster) -> None:
        if cluster is self._shared_cluster:
            self._shared_cluster = None
        if cluster in self._clusters:
            self._clusters.remove(cluster)
        self._record_cluster(cluster)
        cluster.stop()

    # -- the end --------------------------------------------------------------------------------
    @property
    def running(self) -> list[EmbeddedBroker | EmbeddedCluster]:
        """The brokers and clusters started here and not stopped yet."""
        return [*self._brokers, *self._clusters]

    def stop_all(self) -> None:
        """Stop every cluster and broker still running (clusters first: their processes take longest)."""
        errors: list[BaseException] = []
        for cluster in list(self._clusters):
            try:
                self.stop_cluster(cluster)
            except Exception as e:  # stop the rest, then report
                errors.append(e)
        for broker in list(self._brokers):
            try:
                self.stop_broker(broker)
            except Exception as e:
                errors.append(e)
        if errors:
            raise RuntimeError(f"kafkalog: stopping the test brokers failed: {errors!r}")

    def leftovers(self) -> list[str]:
        """What outlives ``stop_all``: addresses that still accept connections and child processes still
        alive, one line each (empty when everything is gone)."""
        found = [f"{address} still accepts connections" for address in self.addresses if accepts_connections(address)]
        found += [f"child process {pid} is still alive" for pid in self.pids if process_alive(pid)]
        return found

    def __repr__(self) -> str:
        return (
            f"KafkalogResources(running={len(self.running)}, addresses={len(self.addresses)}, "
            f"children={len(self.pids)})"
        )
