"""Cluster-level fault operations on an ``EmbeddedCluster``'s broker processes, as librdkafka's mock cluster offers
them (``rd_kafka_mock_partition_set_leader``, ``rd_kafka_mock_coordinator_set``, ``rd_kafka_mock_broker_set_down``
/ ``up``), done the way an operator would on a real cluster, so every client sees them through the protocol:

* ``move_leader(topic, partition, broker_id)``: the broker becomes the partition's preferred replica (its
  replica list reordered, or - when it is not a replica - its replicas reassigned to ``[broker_id] + the first
  RF-1 current ones``, AlterPartitionReassignments, KIP-455), then a preferred leader election (ElectLeaders,
  KIP-460) makes it the leader once it is in the ISR. Returns when every running broker's Metadata names it
  the leader and shows the new replica list (a reassignment complete);
* ``pin_coordinator(key, broker_id, key_type="group" | "transaction")``: the coordinator of a group id (of a
  transactional id) is the leader of partition ``abs(hashCode(key)) % partitions`` of ``__consumer_offsets``
  (``__transaction_state``); FindCoordinator creates the topic when missing, then that partition's leader is
  moved. Returns when every running broker's FindCoordinator answers ``broker_id`` and ``broker_id`` serves the
  key (DescribeGroups / DescribeTransactions answer neither NOT_COORDINATOR nor COORDINATOR_LOAD_IN_PROGRESS:
  the new leader has loaded the partition);
* ``broker_down(broker_id)``: the broker process stops (``clean=True``: SIGTERM, whose controlled shutdown
  moves its leaderships first; ``clean=False``: SIGKILL, a crash the controller sees when the ZooKeeper session
  expires, ``zookeeper.session.timeout.ms``), keeping its log dir and port. Returns when every running broker's
  Metadata lists it no more, names it leader of no partition and shows a leader for every partition with a
  running in-sync replica (partitions it alone had in sync stay offline, leader -1); when it was the only
  running broker, once its process has ended;
* ``broker_up(broker_id)``: the process starts again on the same log dir and port. Returns when every running
  broker's Metadata lists it and it is in the ISR of every partition it replicates that has a leader (or that
  it alone can lead again). Leaderships moved away stay where they are (Kafka's preferred-replica rebalance
  is ``auto.leader.rebalance.enable``); ``move_leader`` moves one back.

The context-manager forms undo on exit (also on error): ``broker_stopped(id)`` (down, then up),
``leader_moved(topic, partition, id)`` and ``coordinator_pinned(key, id)`` (the partition's replica list as it
was, and its first replica leading again).

Each operation is logged at INFO on the ``kafkalog.faults`` logger (as the request-path faults are) when it
starts and once it is visible. Every wait polls the running brokers over fresh connections
(``EmbeddedCluster.connect``, so secured clusters work) and raises ``TimeoutError`` naming what was last seen.
Not thread-safe, like ``EmbeddedCluster``: drive it from the thread that drives the cluster (clients may run on
any thread).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from spark_kafkalog.client.errors import KafkaClientError
from spark_kafkalog.client.metadata import metadata_request
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode

from .coordinator.offsets_topic import OFFSETS_TOPIC, partition_for
from .coordinator.transaction_log import TRANSACTION_STATE_TOPIC, transaction_partition_for

__all__ = ["COORDINATOR_KEY_TYPES", "Cluster", "ClusterOperations", "preferred_target"]

log = logging.getLogger("kafkalog.faults")

COORDINATOR_KEY_TYPES: dict[str, tuple[int, str, Callable[[str, int], int]]] = {
    "group": (0, OFFSETS_TOPIC, partition_for),
    "transaction": (1, TRANSACTION_STATE_TOPIC, transaction_partition_for),
}
"""``key_type`` name -> (FindCoordinator key type, internal topic, partition of a key among n partitions)."""

_POLL_S = 0.1
_PROBE_TIMEOUT_S = 5.0
_FIND_BATCHED_FROM = 4  # FindCoordinator v4+: coordinator_keys (KIP-699)
_RETRY_ELECTION = {ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE}
_NOT_SERVED = {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE}


def preferred_target(replicas: list[int], broker_id: int) -> list[int]:
    """The replica list that makes ``broker_id`` the preferred (first) replica of a partition now on
    ``replicas``: the same brokers reordered when it is one of them, else ``broker_id`` in the place of the last
    one (the replication factor stays); ``replicas`` itself when it already comes first."""
    if broker_id in replicas:
        return [broker_id, *(r for r in replicas if r != broker_id)]
    return [broker_id, *replicas[:-1]]


class Cluster(Protocol):
    """What the operations use of an ``EmbeddedCluster`` (declared here: ``broker.embedded_cluster`` imports this
    module, so this one does not import it back)."""

    host: str
    broker_ids: list[int]
    ports: dict[int, int]
    client_config: dict[str, str]
    processes: dict[int, Any]

    def connect(self, broker_id: int, timeout_s: float = ...) -> Any: ...
    def stop_broker(self, broker_id: int, timeout_s: float = ...) -> int | None: ...
    def kill_broker(self, broker_id: int) -> None: ...
    def start_broker(self, broker_id: int) -> None: ...
    def exited_brokers(self) -> dict[int, int]: ...
    def forget_broker(self, broker_id: int) -> None: ...


class ClusterOperations:
    """The operations of the module docstring on ``cluster`` (an ``EmbeddedCluster`` that is started)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    # -- the operations -------------------------------------------------------------------------
    def move_leader(self, topic: str, partition: int, broker_id: int, timeout_s: float = 30.0) -> None:
        """Make ``broker_id`` the leader of ``topic``-``partition`` (see the module docstring)."""
        from spark_kafkalog.client.types import TopicPartition

        deadline = time.monotonic() + timeout_s
        self._require_running(broker_id)
        tp = TopicPartition(topic, partition)
        replicas = list(self._partition(topic, partition, deadline).replica_nodes)
        with self._admin() as admin:
            target = preferred_target(replicas, broker_id)
            log.info(
                "moving the leader of %s-%d to broker %d (replicas %s -> %s)",
                topic,
                partition,
                broker_id,
                replicas,
                target,
            )
            if target != replicas:
                admin.alter_partition_reassignments({tp: target}, timeout_ms=int(timeout_s * 1000))
            # done: the leader everywhere, and the replica list the reassignment made (complete: no replica is
            # being added or removed) or, without one, still with broker_id first
            want = tuple(target) if target != replicas else None
            seen: dict[int, tuple[int, tuple[int, ...]]] = {}
            while True:
                seen = self._leaders(topic, partition)
                if seen and all(
                    leader == broker_id and (order == want if want is not None else order[:1] == (broker_id,))
                    for leader, order in seen.values()
                ):
                    log.info("broker %d leads %s-%d", broker_id, topic, partition)
                    return
                if any(leader != broker_id for leader, _ in seen.values()):
                    self._elect_preferred(admin, tp, deadline)
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{topic}-{partition}: broker {broker_id} did not become the leader within {timeout_s} s "
                        f"((leader, replicas) by broker: {seen})"
                    )
                time.sleep(_POLL_S)

    def pin_coordinator(self, key: str, broker_id: int, *, key_type: str = "group", timeout_s: float = 30.0) -> int:
        """Make ``broker_id`` the coordinator of group id (``key_type="group"``) or transactional id
        (``"transaction"``) ``key``; returns the internal topic's partition that was moved."""
        if key_type not in COORDINATOR_KEY_TYPES:
            raise ValueError(f"key_type must be one of {sorted(COORDINATOR_KEY_TYPES)}, not {key_type!r}")
        deadline = time.monotonic() + timeout_s
        self._require_running(broker_id)
        topic, partition = self._coordinator_partition(key, key_type, deadline)
        log.info("pinning the coordinator of %s %r (%s-%d) to broker %d", key_type, key, topic, partition, broker_id)
        self.move_leader(topic, partition, broker_id, max(deadline - time.monotonic(), 0.1))
        self._await_coordinator(key, key_type, broker_id, deadline)
        log.info("broker %d coordinates %s %r", broker_id, key_type, key)
        return partition

    @contextlib.contextmanager
    def leader_moved(self, topic: str, partition: int, broker_id: int, timeout_s: float = 30.0) -> Iterator[None]:
        """``with ops.leader_moved(topic, partition, broker_id):`` ``move_leader`` on entry; on exit (also on
        error) the partition gets its replica list back and its first replica leads again (a preferred
        election), as ``move_leader`` waits for it."""
        deadline = time.monotonic() + timeout_s
        replicas = list(self._partition(topic, partition, deadline).replica_nodes)
        self.move_leader(topic, partition, broker_id, timeout_s)
        try:
            yield
        finally:
            self._restore(topic, partition, replicas, timeout_s)

    @contextlib.contextmanager
    def coordinator_pinned(
        self, key: str, broker_id: int, *, key_type: str = "group", timeout_s: float = 30.0
    ) -> Iterator[int]:
        """``with ops.coordinator_pinned(key, broker_id) as partition:`` ``pin_coordinator`` on entry; on exit
        the internal partition gets its replica list back and its first replica coordinates ``key`` again
        (every broker's FindCoordinator answers it and it serves the key)."""
        deadline = time.monotonic() + timeout_s
        topic, partition = self._coordinator_partition(key, key_type, deadline)
        replicas = list(self._partition(topic, partition, deadline).replica_nodes)
        self.pin_coordinator(key, broker_id, key_type=key_type, timeout_s=timeout_s)
        try:
            yield partition
        finally:
            self._restore(topic, partition, replicas, timeout_s)
            self._await_coordinator(key, key_type, replicas[0], time.monotonic() + timeout_s)

    def _restore(self, topic: str, partition: int, replicas: list[int], timeout_s: float) -> None:
        """Give ``topic``-``partition`` its replica list ``replicas`` back and let its first replica lead."""
        from spark_kafkalog.client.types import TopicPartition

        deadline = time.monotonic() + timeout_s
        if list(self._partition(topic, partition, deadline).replica_nodes) != replicas:
            with self._admin() as admin:
                admin.alter_partition_reassignments(
                    {TopicPartition(topic, partition): replicas}, timeout_ms=int(timeout_s * 1000)
                )

            def restored(views: dict[int, Any]) -> bool:
                return all(
                    list(p.replica_nodes) == replicas
                    for view in views.values()
                    for t in view.topics
                    for p in t.partitions
                    if t.name == topic and p.partition_index == partition
                )

            # a reassignment back to brokers that were removed completes once they caught up again
            self._wait(
                restored,
                lambda: self._metadata_views([topic]),
                deadline,
                f"{topic}-{partition} did not get its replicas {replicas} back",
            )
        self.move_leader(topic, partition, replicas[0], max(deadline - time.monotonic(), 0.1))

    def _coordinator_partition(self, key: str, key_type: str, deadline: float) -> tuple[str, int]:
        """(internal topic, partition) holding ``key``; the topic is created (by a FindCoordinator) when missing."""
        if key_type not in COORDINATOR_KEY_TYPES:
            raise ValueError(f"key_type must be one of {sorted(COORDINATOR_KEY_TYPES)}, not {key_type!r}")
        code, topic, partition_of = COORDINATOR_KEY_TYPES[key_type]
        self._wait(
            lambda answers: all(node >= 0 for node in answers.values()),
            lambda: self._coordinators(code, key),
            deadline,
            f"{key_type} {key!r} has no coordinator (FindCoordinator creates {topic})",
        )
        return topic, partition_of(key, len(self._topic(topic, deadline).partitions))

    def _await_coordinator(self, key: str, key_type: str, broker_id: int, deadline: float) -> None:
        """Wait until every running broker's FindCoordinator answers ``broker_id`` for ``key`` and it serves it."""
        code, topic, _ = COORDINATOR_KEY_TYPES[key_type]
        self._wait(
            lambda answers: all(node == broker_id for node in answers.values()),
            lambda: self._coordinators(code, key),
            deadline,
            f"FindCoordinator for {key_type} {key!r} (in {topic}) does not answer broker {broker_id} on every "
            f"broker (coordinator by broker)",
        )
        self._wait(
            bool,
            lambda: self._serves(broker_id, code, key),
            deadline,
            f"broker {broker_id} does not serve {key_type} {key!r} yet (loading its partition of {topic})",
        )

    def broker_down(self, broker_id: int, *, clean: bool = True, timeout_s: float = 30.0) -> None:
        """Stop ``broker_id``'s process, keeping its data and port (see the module docstring)."""
        deadline = time.monotonic() + timeout_s
        self._require_running(broker_id)
        log.info("taking broker %d down (%s)", broker_id, "SIGTERM" if clean else "SIGKILL")
        if clean:
            self.cluster.stop_broker(broker_id, timeout_s)
        else:
            self.cluster.kill_broker(broker_id)

        running = set(self._running())
        if not running:  # it was the last one: its port is closed, no broker is left to show anything
            log.info("broker %d is down (no broker is running now)", broker_id)
            return

        def gone(views: dict[int, Any]) -> bool:
            for view in views.values():
                if broker_id in {b.node_id for b in view.brokers}:
                    return False
                for t in view.topics:
                    for p in t.partitions:
                        if p.leader_id == broker_id:
                            return False
                        if p.leader_id < 0 and running.intersection(p.isr_nodes):
                            return False  # a running in-sync replica is to be elected: wait for it
            return True

        self._wait(gone, lambda: self._metadata_views(None), deadline, f"the brokers still see broker {broker_id}")
        log.info("broker %d is down", broker_id)

    def broker_up(self, broker_id: int, timeout_s: float = 60.0) -> None:
        """Start ``broker_id`` again (same log dir and port) and wait until it is back (module docstring)."""
        deadline = time.monotonic() + timeout_s
        if broker_id not in self.cluster.broker_ids:
            raise ValueError(f"broker {broker_id} is not one of the cluster's brokers {self.cluster.broker_ids}")
        if broker_id in self.cluster.exited_brokers():
            self.cluster.forget_broker(broker_id)
        log.info("bringing broker %d up", broker_id)
        self.cluster.start_broker(broker_id)

        def back(views: dict[int, Any]) -> bool:
            for view in views.values():
                if broker_id not in {b.node_id for b in view.brokers}:
                    return False
                for t in view.topics:
                    for p in t.partitions:
                        if broker_id in p.replica_nodes and broker_id not in p.isr_nodes and p.leader_id >= 0:
                            return False
                        if p.leader_id < 0 and list(p.isr_nodes) == [broker_id]:
                            return False  # it alone can lead this partition: wait for its election
            return True

        self._wait(
            back,
            lambda: self._metadata_views(None),
            deadline,
            f"broker {broker_id} is not back in the metadata and the ISRs of its partitions",
        )
        log.info("broker %d is up and in sync", broker_id)

    @contextlib.contextmanager
    def broker_stopped(self, broker_id: int, *, clean: bool = True, timeout_s: float = 60.0) -> Iterator[None]:
        """``with ops.broker_stopped(id):`` the broker is down inside the block, up again after it (also on
        error)."""
        self.broker_down(broker_id, clean=clean, timeout_s=timeout_s)
        try:
            yield
        finally:
            self.broker_up(broker_id, timeout_s=timeout_s)

    # -- probes ---------------------------------------------------------------------------------
    def _running(self) -> list[int]:
        return [b for b, proc in sorted(self.cluster.processes.items()) if proc.poll() is None]

    def _require_running(self, broker_id: int) -> None:
        if broker_id not in self._running():
            raise ValueError(f"broker {broker_id} is not running (running: {self._running()})")

    def _admin(self) -> Any:
        from spark_kafkalog.client import AdminClient

        bootstrap = ",".join(f"{self.cluster.host}:{self.cluster.ports[b]}" for b in self._running())
        return AdminClient(bootstrap, dict(self.cluster.client_config) or None)

    def _ask(self, broker_id: int, api_key: int, build: Callable[[int], Any]) -> Any:
        """One request to ``broker_id`` on a fresh connection; ``build(version)`` makes its body."""
        conn = self.cluster.connect(broker_id, _PROBE_TIMEOUT_S)
        try:
            version = conn.versions.pick(api_key)
            return conn.request(api_key, build(version), version=version, timeout=_PROBE_TIMEOUT_S)
        finally:
            conn.close()

    def _metadata_views(self, topics: list[str] | None) -> dict[int, Any]:
        """``{broker id: Metadata response}`` of every running broker that answers."""
        views = {}
        for b in self._running():
            try:
                views[b] = self._ask(b, ApiKey.METADATA, lambda v: metadata_request(v, topics, False))
            except (KafkaClientError, OSError):  # going down or not serving yet: the others decide
                continue
        return views

    def _leaders(self, topic: str, partition: int) -> dict[int, tuple[int, tuple[int, ...]]]:
        """``{broker id: (leader, replicas) of topic-partition in its metadata}`` (-1, (): none or unknown)."""
        out = {}
        for b, view in self._metadata_views([topic]).items():
            both: tuple[int, tuple[int, ...]] = (-1, ())
            for t in view.topics:
                for p in t.partitions:
                    if t.name == topic and p.partition_index == partition:
                        both = (p.leader_id, tuple(p.replica_nodes))
            out[b] = both
        return out

    def _topic(self, topic: str, deadline: float) -> Any:
        """``topic``'s Metadata entry from a running broker, waiting while it is unknown or being created."""

        def find(views: dict[int, Any]) -> Any:
            for view in views.values():
                for t in view.topics:
                    if t.name == topic and t.error_code == ErrorCode.NONE and t.partitions:
                        return t
            return None

        return find(self._wait(lambda v: find(v) is not None, lambda: self._metadata_views([topic]), deadline, topic))

    def _partition(self, topic: str, partition: int, deadline: float) -> Any:
        for p in self._topic(topic, deadline).partitions:
            if p.partition_index == partition:
                return p
        raise ValueError(f"topic {topic!r} has no partition {partition}")

    def _coordinators(self, key_type: int, key: str) -> dict[int, int]:
        """``{broker id: node FindCoordinator answers for key}`` (-1 for an error) of every running broker."""
        R = API_BY_KEY[ApiKey.FIND_COORDINATOR].Request

        def build(version: int) -> Any:
            if version >= _FIND_BATCHED_FROM:
                return R(key_type=key_type, coordinator_keys=[key])
            return R(key=key, key_type=key_type)

        out = {}
        for b in self._running():
            try:
                response = self._ask(b, ApiKey.FIND_COORDINATOR, build)
            except (KafkaClientError, OSError):
                continue
            found = (
                response.coordinators[0] if hasattr(response, "coordinators") and response.coordinators else response
            )
            out[b] = found.node_id if found.error_code == ErrorCode.NONE else -1
        return out

    def _serves(self, broker_id: int, key_type: int, key: str) -> bool:
        """``broker_id`` coordinates ``key`` now: DescribeGroups (key type 0) or DescribeTransactions (1) answer
        it without NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE."""
        build: Callable[[int], Any]
        if key_type == 0:
            DG = API_BY_KEY[ApiKey.DESCRIBE_GROUPS].Request
            api_key, build = ApiKey.DESCRIBE_GROUPS, lambda v: DG(groups=[key], include_authorized_operations=False)
        else:
            DT = API_BY_KEY[ApiKey.DESCRIBE_TRANSACTIONS].Request
            api_key, build = ApiKey.DESCRIBE_TRANSACTIONS, lambda v: DT(transactional_ids=[key])
        try:
            response = self._ask(broker_id, api_key, build)
        except (KafkaClientError, OSError):
            return False
        entries = response.groups if key_type == 0 else response.transaction_states
        return bool(entries) and all(e.error_code not in _NOT_SERVED for e in entries)

    def _elect_preferred(self, admin: Any, tp: Any, deadline: float) -> None:
        """A preferred leader election of ``tp``; the retriable refusals (not in the ISR yet) are left to the
        caller's next round."""
        remaining_ms = max(int((deadline - time.monotonic()) * 1000), 100)
        try:
            result = admin.elect_leaders("preferred", [tp], timeout_ms=min(remaining_ms, 10000))
        except KafkaClientError as e:
            if e.retriable:
                return
            raise
        error = result.get(tp)
        if error is None or error.error_code == ErrorCode.ELECTION_NOT_NEEDED or error.error_code in _RETRY_ELECTION:
            return
        raise error

    def _wait(self, done: Callable[[Any], bool], probe: Callable[[], Any], deadline: float, what: str) -> Any:
        """Poll ``probe()`` until ``done(result)`` (and a broker answered), returning that result."""
        while True:
            seen = probe()
            if seen and done(seen):
                return seen
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} (last seen: {_summary(seen)})")
            time.sleep(_POLL_S)


def _summary(seen: Any) -> str:
    """A short form of a probe's result for an error message (Metadata responses by their brokers)."""
    if isinstance(seen, dict) and all(hasattr(v, "brokers") for v in seen.values()):
        return str({b: sorted(x.node_id for x in v.brokers) for b, v in seen.items()}) + " brokers by broker"
    return repr(seen)
