"""Cluster registry: the interface brokers and the controller use to share cluster state, plus its value types.

The registry is the broker's only view of cluster metadata held outside the process. Two implementations:
``broker.cluster.zk_registry.ZooKeeperRegistry`` (a real ZooKeeper ensemble, Kafka's znode layout) and
``broker.cluster.memory_registry`` (in-process, for single-process embedded brokers). Nothing here imports
kazoo. Parts of the interface live in their own modules, re-exported here: ``acl_store.AclStore`` (ACL storage),
``entity_configs.EntityConfigStore`` and ``QuotaEntity`` (user and client quota entity configs),
``subscription.Subscription`` (the handle of a watch), ``registry_errors`` (the errors).

ZooKeeper layout and node contents (JSON, UTF-8; Kafka 2.x ZooKeeper-mode formats, 0.8-era paths)::

    /cluster/id                      {"version":"1","id":"<22-char base64url>"}   persistent, created once
    /brokers/ids/<id>                ephemeral, BrokerInfo.to_json() (version 5):
        {"features":{},"listener_security_protocol_map":{"CLIENT":"SASL_SSL","INTERNAL":"PLAINTEXT"},
         "endpoints":["CLIENT://host:9093","INTERNAL://10.0.0.1:9092"],"rack":"r1","jmx_port":-1,
         "host":"10.0.0.1","timestamp":"1528150180386","port":9092,"version":5}
        ("rack" only when set; host/port: the first PLAINTEXT endpoint, else null/-1)
    /brokers/topics/<t>              TopicAssignment.to_json() (version 3):
        {"version":3,"topic_id":"<22-char base64url>","partitions":{"0":[1,2],"1":[3,1,2]},
         "adding_replicas":{"1":[3]},"removing_replicas":{"1":[2]}}        (partition 1: [1,2] -> [3,1])
    /brokers/topics/<t>/partitions/<p>/state    PartitionState.to_json() (version 1):
        {"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}
    /controller                      ephemeral {"version":1,"brokerid":1,"timestamp":"1528150180386"}
    /controller_epoch                decimal integer, e.g. "3"; the first elected controller gets epoch 1
    /config/topics/<t>               {"version":1,"config":{"cleanup.policy":"compact"}}
    /config/changes/config_change_<10-digit seq>   persistent sequential {"version":2,"entity_path":"topics/<t>"}
                                     (or "brokers/<id>", "brokers/<default>", "users/<sanitized user>")
    /config/brokers/<id>             {"version":1,"config":{"log.retention.ms":"60000"}}  dynamic broker configs
    /config/brokers/<default>        the same, cluster-wide defaults of every broker
    /config/users/<sanitized user>   {"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,
                                     server_key=<b64>,iterations=8192"}}   (+ quota keys; change notice "users/<u>")
    /admin/delete_topics/<t>         empty; present while the topic awaits deletion
    /consumers/<g>/offsets/<t>/<p>   decimal offset, e.g. "42" (0.8 ZooKeeper offset storage)
    /kafka-acl/<Type>/<name>, /kafka-acl-extended/prefixed/<Type>/<prefix>   ACLs, with change notices under
                                     /kafka-acl-changes and /kafka-acl-extended-changes (formats: zk_layout)

Kafka stores timestamps as strings of epoch milliseconds, topic and cluster ids as base64url without padding
(``org.apache.kafka.common.Uuid``); both are reproduced here so Kafka's own tooling reads our nodes.

Concurrency contract of every ``ClusterRegistry``: all methods are thread-safe. Watch callbacks run on one
registry-owned dispatcher thread, one at a time, in the order the changes were observed, never while a
registry lock is held; they must not block (hand work to your own thread or event loop). A callback may call
registry methods. An exception raised by a callback is logged and does not stop later deliveries.
"""

from __future__ import annotations

import abc
import base64
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from broker.cluster.acl_store import AclStore
from broker.cluster.entity_configs import EntityConfigStore, QuotaEntity
from broker.cluster.registry_errors import (
    BrokerIdInUseError,
    NoSuchTopicError,
    RegistryError,
    RegistryUnavailableError,
    StaleStateError,
    TopicExistsError,
)
from broker.cluster.subscription import Subscription

if TYPE_CHECKING:
    from broker.cluster.registration_record import RegistrationRecord

__all__ = [
    "BrokerInfo",
    "PartitionState",
    "TopicAssignment",
    "QuotaEntity",
    "Subscription",
    "ClusterRegistry",
    "RegistryError",
    "BrokerIdInUseError",
    "TopicExistsError",
    "NoSuchTopicError",
    "StaleStateError",
    "RegistryUnavailableError",
    "ZERO_UUID",
    "new_topic_id",
    "new_cluster_id",
    "uuid_to_base64",
    "uuid_from_base64",
]

# -- ids ---------------------------------------------------------------------------------------------

ZERO_UUID = uuid.UUID(int=0)
"""Kafka's ``Uuid.ZERO_UUID``: "no topic id" (older assignment nodes carry none)."""


def uuid_to_base64(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: 16 big-endian bytes, URL-safe base64 without padding (22 chars)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_base64(text: str) -> uuid.UUID:
    """Inverse of ``uuid_to_base64``; raises ValueError naming the text when it is not a 22-char id."""
    if not isinstance(text, str) or len(text) != 22:
        raise ValueError(f"not a base64url uuid (22 characters expected): {text!r}")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a base64url uuid: {text!r}") from exc
    return uuid.UUID(bytes=raw)


def new_topic_id() -> uuid.UUID:
    """A random topic id as Kafka makes them: never ZERO/METADATA (0, 1), never rendered with a leading '-'."""
    while True:
        candidate = uuid.uuid4()
        if candidate.int > 1 and not uuid_to_base64(candidate).startswith("-"):
            return candidate


def new_cluster_id() -> str:
    """A random cluster id: 22 characters of ``[a-zA-Z0-9_-]`` (Kafka's ``generateUuidAsBase64``)."""
    return uuid_to_base64(uuid.uuid4())


def _now_ms_string() -> str:
    return str(int(time.time() * 1000))


def _loads(data: bytes | str, what: str) -> dict:
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what}: not JSON: {data!r:.200}") from exc
    if not isinstance(obj, dict):
        raise ValueError(f"{what}: expected a JSON object, got {obj!r:.200}")
    return obj


def _dumps(obj: dict) -> str:
    return json.dumps(obj, separators=(",", ":"))


# -- value types -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerInfo:
    """One live broker, as registered at ``/brokers/ids/<broker_id>`` (version 5 JSON, Kafka's ``ZkData``).

    ``endpoints`` are advertised listener URLs with the real listener names (``"CLIENT://host:9093"``); when
    given empty, the constructor fills in one PLAINTEXT endpoint from ``host``/``port``.
    ``listener_security_protocol_map`` maps each listener name to its security protocol; names it lacks map
    to themselves (what Kafka assumes for nodes older than version 4, whose names were the protocols).
    ``host``/``port`` are the address used in messages and for nodes without endpoints; in the JSON the
    top-level pair is the first PLAINTEXT endpoint, else ``null``/-1, as Kafka writes it. Reading accepts
    versions 1-5 (Kafka 0.8-3.9).
    """

    broker_id: int
    host: str
    port: int
    rack: str | None = None
    endpoints: tuple[str, ...] = ()
    listener_security_protocol_map: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.broker_id, int) or self.broker_id < 0:
            raise ValueError(f"broker id must be a non-negative int, got {self.broker_id!r}")
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ValueError(f"broker {self.broker_id}: port out of range: {self.port!r}")
        endpoints = tuple(self.endpoints) or (f"PLAINTEXT://{self.host}:{self.port}",)
        protocols = dict(self.listener_security_protocol_map)
        for url in endpoints:
            name, sep, hostport = url.partition("://")
            if not sep or not name or ":" not in hostport:
                raise ValueError(f"broker {self.broker_id}: endpoint {url!r} is not LISTENER://host:port")
            protocols.setdefault(name, name)
        object.__setattr__(self, "endpoints", endpoints)
        object.__setattr__(self, "listener_security_protocol_map", protocols)

    @property
    def advertised_endpoints(self) -> tuple[str, ...]:
        return self.endpoints

    @property
    def listener_names(self) -> tuple[str, ...]:
        """The names of the listeners this broker advertises, in registration order."""
        return tuple(url.partition("://")[0] for url in self.endpoints)

    def listener_endpoint(self, listener: str) -> tuple[str, int] | None:
        """``(host, port)`` of the named listener's advertised endpoint; None when the broker has no such
        listener (Metadata leaves the broker out, Kafka's ``LISTENER_NOT_FOUND``)."""
        for url in self.advertised_endpoints:
            name, _, hostport = url.partition("://")
            if name == listener:
                host, _, port = hostport.rpartition(":")
                return host.strip("[]"), int(port)
        return None

    def endpoint(self, listener: str) -> tuple[str, int]:
        """``(host, port)`` of the named listener's advertised endpoint; the registered host and port when the
        broker advertises no such listener."""
        found = self.listener_endpoint(listener)
        return found if found is not None else (self.host, self.port)

    @property
    def address(self) -> str:
        """``host:port``, e.g. for error messages."""
        return f"{self.host}:{self.port}"

    def to_json(self) -> str:
        """Version 5, Kafka's key order: ``features``, ``listener_security_protocol_map``, ``endpoints``,
        ``rack`` (only when set), ``jmx_port``, ``host``/``port`` (the first PLAINTEXT endpoint, else
        ``null``/-1), ``timestamp``, ``version``."""
        endpoints = list(self.advertised_endpoints)
        protocols = {name: self.listener_security_protocol_map[name] for name in self.listener_names}
        plaintext = next((n for n in self.listener_names if protocols[n] == "PLAINTEXT"), None)
        found = self.listener_endpoint(plaintext) if plaintext is not None else None
        host, port = found if found is not None else (None, -1)
        obj: dict = {"features": {}, "listener_security_protocol_map": protocols, "endpoints": endpoints}
        if self.rack is not None:
            obj["rack"] = self.rack
        obj.update({"jmx_port": -1, "host": host, "timestamp": _now_ms_string(), "port": port, "version": 5})
        return _dumps(obj)

    @classmethod
    def from_json(cls, broker_id: int, data: bytes | str) -> BrokerInfo:
        """Parse any version (1-5) of the broker node; host/port come from the first endpoint when absent
        (``null``/-1: a broker without a PLAINTEXT listener)."""
        what = f"/brokers/ids/{broker_id}"
        obj = _loads(data, what)
        endpoints = tuple(obj.get("endpoints") or ())
        host, port = obj.get("host"), obj.get("port", -1)
        if (not host or port in (None, -1)) and endpoints:
            hostport = endpoints[0].split("://", 1)[-1]
            host, _, port_text = hostport.rpartition(":")
            host = host.strip("[]")
            port = int(port_text)
        if not host or not isinstance(port, int):
            raise ValueError(f"{what}: no host/port in {obj!r:.200}")
        protocols = obj.get("listener_security_protocol_map") or {}
        if not isinstance(protocols, dict):
            raise ValueError(f"{what}: listener_security_protocol_map is not an object: {protocols!r:.200}")
        return cls(
            broker_id=int(broker_id),
            host=host,
            port=int(port),
            rack=obj.get("rack"),
            endpoints=endpoints,
            listener_security_protocol_map={str(k): str(v) for k, v in protocols.items()},
        )


@dataclass(frozen=True)
class PartitionState:
    """Leader and ISR of one partition (``/brokers/topics/<t>/partitions/<p>/state``, version 1 JSON).

    ``zk_version`` is the node's data version when read (-1: not read from the store); it drives the
    compare-and-set in ``ClusterRegistry.update_partition_state`` and is not part of the JSON.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    zk_version: int = -1

    def to_json(self) -> str:
        return _dumps(
            {
                "controller_epoch": self.controller_epoch,
                "leader": self.leader,
                "version": 1,
                "leader_epoch": self.leader_epoch,
                "isr": list(self.isr),
            }
        )

    @classmethod
    def from_json(cls, data: bytes | str, zk_version: int = -1, *, what: str = "partition state") -> PartitionState:
        obj = _loads(data, what)
        try:
            return cls(
                leader=int(obj["leader"]),
                leader_epoch=int(obj["leader_epoch"]),
                isr=tuple(int(b) for b in obj["isr"]),
                controller_epoch=int(obj["controller_epoch"]),
                zk_version=zk_version,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{what}: malformed partition state {obj!r:.200}") from exc


@dataclass(frozen=True)
class TopicAssignment:
    """Replica assignment of a topic (``/brokers/topics/<name>``, version 3 JSON).

    ``partitions`` maps partition id to its replica list, preferred leader first. Nodes written by Kafka
    before 2.8 carry no topic id: ``from_json`` then gives ``ZERO_UUID``.

    ``adding_replicas`` / ``removing_replicas`` (KIP-455) hold, for each partition being reassigned, the
    replicas the reassignment adds and removes; both are subsets of the partition's replicas (which are then
    the target replicas followed by the original ones), disjoint, and absent (not empty) for partitions that are
    not being reassigned.
    """

    name: str
    partitions: Mapping[int, tuple[int, ...]]
    topic_id: uuid.UUID = field(default_factory=new_topic_id)
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        normalised = {}
        for p, replicas in self.partitions.items():
            replicas = tuple(replicas)
            if not isinstance(p, int) or p < 0:
                raise ValueError(f"topic {self.name!r}: partition id must be a non-negative int, got {p!r}")
            if not replicas or len(set(replicas)) != len(replicas):
                raise ValueError(
                    f"topic {self.name!r} partition {p}: replicas must be non-empty and distinct, got {list(replicas)}"
                )
            normalised[p] = replicas
        object.__setattr__(self, "partitions", dict(sorted(normalised.items())))
        for attr in ("adding_replicas", "removing_replicas"):
            moving = {p: tuple(r) for p, r in sorted(getattr(self, attr).items()) if r}
            for p, r in moving.items():
                if p not in normalised or not set(r) <= set(normalised[p]) or len(set(r)) != len(r):
                    raise ValueError(
                        f"topic {self.name!r} partition {p}: {attr} {list(r)} must be distinct replicas of "
                        f"{list(normalised.get(p, ()))}"
                    )
            object.__setattr__(self, attr, moving)
        for p, r in self.adding_replicas.items():
            if set(r) & set(self.removing_replicas.get(p, ())):
                raise ValueError(f"topic {self.name!r} partition {p}: a replica is both added and removed")

    def is_reassigning(self, partition: int) -> bool:
        """Is a reassignment of ``partition`` in progress (replicas being added or removed)?"""
        return partition in self.adding_replicas or partition in self.removing_replicas

    def reassigning_partitions(self) -> list[int]:
        """Partitions with a reassignment in progress, sorted."""
        return sorted(set(self.adding_replicas) | set(self.removing_replicas))

    def with_partition(
        self, partition: int, replicas: tuple[int, ...], adding: tuple[int, ...] = (), removing: tuple[int, ...] = ()
    ) -> TopicAssignment:
        """A copy with ``partition``'s replicas (and its adding/removing replicas) replaced."""
        adding_map = {p: r for p, r in self.adding_replicas.items() if p != partition}
        removing_map = {p: r for p, r in self.removing_replicas.items() if p != partition}
        if adding:
            adding_map[partition] = tuple(adding)
        if removing:
            removing_map[partition] = tuple(removing)
        return TopicAssignment(
            self.name, {**self.partitions, partition: tuple(replicas)}, self.topic_id, adding_map, removing_map
        )

    def to_json(self) -> str:
        return _dumps(
            {
                "version": 3,
                "topic_id": uuid_to_base64(self.topic_id),
                "partitions": {str(p): list(r) for p, r in sorted(self.partitions.items())},
                "adding_replicas": {str(p): list(r) for p, r in self.adding_replicas.items()},
                "removing_replicas": {str(p): list(r) for p, r in self.removing_replicas.items()},
            }
        )

    @classmethod
    def from_json(cls, name: str, data: bytes | str) -> TopicAssignment:
        """Any version (1-3) of the assignment node; versions before 2 have no adding/removing replicas."""
        what = f"/brokers/topics/{name}"
        obj = _loads(data, what)
        try:
            partitions = {int(p): tuple(int(b) for b in r) for p, r in obj["partitions"].items()}
            adding = {int(p): tuple(int(b) for b in r) for p, r in (obj.get("adding_replicas") or {}).items()}
            removing = {int(p): tuple(int(b) for b in r) for p, r in (obj.get("removing_replicas") or {}).items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"{what}: malformed assignment {obj!r:.200}") from exc
        raw_id = obj.get("topic_id")
        topic_id = uuid_from_base64(raw_id) if raw_id else ZERO_UUID
        try:
            return cls(name, partitions, topic_id, adding, removing)
        except ValueError as exc:
            raise ValueError(f"{what}: {exc}") from exc


BrokersCallback = Callable[[dict[int, BrokerInfo]], None]
TopicsCallback = Callable[[dict[str, TopicAssignment]], None]
DeletionsCallback = Callable[[list[str]], None]
PartitionStatesCallback = Callable[[dict[int, PartitionState]], None]
ControllerCallback = Callable[["int | None"], None]
SessionCallback = Callable[[], None]


# -- the interface -----------------------------------------------------------------------------------


class ClusterRegistry(AclStore, EntityConfigStore, abc.ABC):
    """Shared cluster state: broker membership, topics, partition leadership, controller, consumer offsets; ACLs
    (the ``AclStore`` methods) and user and client quota entity configs (the ``EntityConfigStore`` methods).

    Lifecycle: ``start(timeout)`` once (connects, creates the persistent skeleton and ``/cluster/id``),
    then any method, then ``close()`` (idempotent; releases ephemeral registrations). Every method may raise
    ``RegistryUnavailableError`` while the store is unreachable. See the module docstring for the
    thread-safety and callback contract.

    Watches (``on_*``): the callback gets a full snapshot once right after registration and again after
    every change (several quick changes may coalesce into one delivery of the latest state). Watches are
    re-armed after every delivery and survive session re-establishment, after which every live watch is
    delivered once more.
    """

    # lifecycle
    @abc.abstractmethod
    def start(self, timeout: float = 10.0) -> None:
        """Connect; create the persistent paths and ``/cluster/id`` if missing. RegistryUnavailableError on timeout."""

    @abc.abstractmethod
    def close(self) -> None:
        """Deregister, stop watches and disconnect. Idempotent."""

    @property
    @abc.abstractmethod
    def cluster_id(self) -> str:
        """The cluster id from ``/cluster/id``: created once by the first registry, then the same for all."""

    # brokers
    @abc.abstractmethod
    def register_broker(self, info: BrokerInfo, record: RegistrationRecord | None = None) -> None:
        """Create the ephemeral ``/brokers/ids/<id>``; BrokerIdInUseError naming the holder's host:port.

        ``record`` (the broker's ``RegistrationRecord``, in its locked log dir) names the session of this
        broker's previous run: a ``/brokers/ids/<id>`` or ``/controller`` still owned by that dead session is
        deleted at once (compare-and-delete) instead of waiting for its expiry, and the record is rewritten
        with the current session before the node is created (again at every re-registration).

        The registration is kept while the broker runs: after a session expiry the registry re-creates it
        before any watch or ``on_session_reestablished`` callback runs, and a node deleted while the session
        lives is re-created with the same content.
        """

    @abc.abstractmethod
    def deregister_broker(self) -> None:
        """Delete this registry's broker node (no-op when not registered)."""

    @abc.abstractmethod
    def live_brokers(self) -> dict[int, BrokerInfo]:
        """Every registered broker by id."""

    # topics
    @abc.abstractmethod
    def create_topic(self, assignment: TopicAssignment, config: Mapping[str, str]) -> None:
        """Write ``/config/topics/<t>`` and ``/brokers/topics/<t>`` atomically; TopicExistsError if either exists."""

    @abc.abstractmethod
    def topics(self) -> dict[str, TopicAssignment]:
        """Every topic's assignment by name (including topics marked for deletion)."""

    @abc.abstractmethod
    def topic(self, name: str) -> TopicAssignment | None:
        """One topic's assignment, or None."""

    @abc.abstractmethod
    def topic_config(self, name: str) -> dict[str, str]:
        """The topic's overrides (empty when it has none); NoSuchTopicError when the topic does not exist."""

    @abc.abstractmethod
    def set_topic_config(self, name: str, config: Mapping[str, str]) -> None:
        """Replace the topic's overrides and write a config change notification; NoSuchTopicError."""

    @abc.abstractmethod
    def broker_config(self, entity: str) -> dict[str, str]:
        """Dynamic configs of ``entity``: a broker id (``"1"``) or ``"<default>"`` (cluster-wide); empty when none."""

    @abc.abstractmethod
    def set_broker_config(self, entity: str, config: Mapping[str, str]) -> None:
        """Replace ``entity``'s dynamic broker configs and write a config change notification."""

    @abc.abstractmethod
    def on_config_changes(self, callback: Callable[[int], None]) -> Subscription:
        """Watch config change notifications (``/config/changes``): callback(count of notifications) after any
        topic or broker config write; re-read the configs you follow when it is called."""

    @abc.abstractmethod
    def add_partitions(self, name: str, new: Mapping[int, tuple[int, ...]]) -> TopicAssignment:
        """Add partitions (ids must continue the existing range) and return the new assignment.

        NoSuchTopicError; ValueError when an id already exists or leaves a gap; StaleStateError when the
        assignment changed concurrently.
        """

    @abc.abstractmethod
    def replace_assignment(self, current: TopicAssignment, new: TopicAssignment) -> TopicAssignment:
        """Compare-and-set the topic's assignment node: write ``new`` if the node still holds ``current``.

        The controller's write of partition reassignments (replicas, adding and removing replicas; same
        name and topic id, same partition ids). NoSuchTopicError; StaleStateError when the node changed.
        """

    @abc.abstractmethod
    def mark_topic_for_deletion(self, name: str) -> None:
        """Create ``/admin/delete_topics/<t>`` (idempotent); NoSuchTopicError."""

    @abc.abstractmethod
    def pending_topic_deletions(self) -> list[str]:
        """Topics marked for deletion, sorted."""

    @abc.abstractmethod
    def remove_topic(self, name: str) -> None:
        """Delete the topic's subtree, its config node and its deletion marker (idempotent)."""

    # partition state
    @abc.abstractmethod
    def partition_states(self, topic: str) -> dict[int, PartitionState]:
        """States of the topic's partitions that have one (empty when none or no topic)."""

    @abc.abstractmethod
    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        """One partition's state, or None."""

    @abc.abstractmethod
    def create_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        """Create the state node; StaleStateError if it exists, NoSuchTopicError if the topic does not.

        Returns the state with its new ``zk_version`` (0).
        """

    @abc.abstractmethod
    def update_partition_state(self, topic: str, partition: int, state: PartitionState) -> PartitionState:
        """Compare-and-set on ``state.zk_version``; StaleStateError when it moved (or the node is gone).

        Returns the state with its new ``zk_version``.
        """

    # controller
    @abc.abstractmethod
    def try_become_controller(self, broker_id: int) -> int | None:
        """Create the ephemeral ``/controller`` and increment ``/controller_epoch`` in one step.

        Returns the new controller epoch, or None when another broker holds ``/controller``
        (``ZooKeeperRegistry``: the current epoch when this registry already holds it).
        """

    @abc.abstractmethod
    def controller_id(self) -> int | None:
        """The broker id in ``/controller``, or None."""

    @abc.abstractmethod
    def controller_epoch(self) -> int:
        """The value of ``/controller_epoch`` (0 before any election)."""

    @abc.abstractmethod
    def resign_controller(self) -> None:
        """Delete ``/controller`` if this registry created it (no-op otherwise)."""

    # watches
    @abc.abstractmethod
    def on_brokers_changed(self, callback: BrokersCallback) -> Subscription:
        """Watch ``/brokers/ids``: callback(live_brokers)."""

    @abc.abstractmethod
    def on_topics_changed(self, callback: TopicsCallback) -> Subscription:
        """Watch topic creation, deletion and partition additions: callback(topics)."""

    @abc.abstractmethod
    def on_topic_deletions(self, callback: DeletionsCallback) -> Subscription:
        """Watch ``/admin/delete_topics``: callback(pending_topic_deletions)."""

    @abc.abstractmethod
    def on_partition_states_changed(self, topic: str, callback: PartitionStatesCallback) -> Subscription:
        """Watch one topic's partition states: callback(partition_states(topic)).

        Works before the topic exists (first delivery is ``{}``); cancel the subscription once the topic is
        deleted.
        """

    @abc.abstractmethod
    def on_controller_changed(self, callback: ControllerCallback) -> Subscription:
        """Watch ``/controller``: callback(controller_id)."""

    @abc.abstractmethod
    def on_session_reestablished(self, callback: SessionCallback) -> Subscription:
        """Called after a session expiry once the broker node has been re-created (not called initially)."""

    # 0.8 consumer offsets in ZooKeeper
    @abc.abstractmethod
    def commit_consumer_offset(self, group: str, topic: str, partition: int, offset: int) -> None:
        """Write ``/consumers/<group>/offsets/<topic>/<partition>`` (created with parents when missing)."""

    @abc.abstractmethod
    def fetch_consumer_offset(self, group: str, topic: str, partition: int) -> int | None:
        """Read the committed offset, or None."""
