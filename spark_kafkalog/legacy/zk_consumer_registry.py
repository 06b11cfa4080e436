"""ZooKeeper side of Kafka 0.8's ``ConsumerConnector`` (design section 5.6): the consumer id registry, the
partition owner registry, offsets in ZooKeeper, and the broker and topic registries it reads. With
``broker/cluster``, the only kazoo importer of the tree.

Znodes (paths relative to the chroot of ``zookeeper.connect``; JSON written compact, UTF-8)::

    /consumers/<group>/ids/<consumer_id>         ephemeral
        {"version":1,"subscription":{"<topic or regex>":<streams>},"pattern":"static","timestamp":"<ms>"}
        (pattern "static" for create_message_streams, "white_list" / "black_list" for a topic filter)
    /consumers/<group>/owners/<topic>/<partition>  ephemeral, the owning consumer thread id "<consumer_id>-<i>"
    /consumers/<group>/offsets/<topic>/<partition> persistent, the next offset to consume as decimal text "42"

Read: ``/brokers/ids/<id>`` (the endpoint of the configured security protocol or listener name,
``broker_endpoints.select_endpoint``), ``/brokers/topics`` (children: the topics) and
``/brokers/topics/<topic>`` (``{"partitions":{"0":[1,2],...}}``).

Watch callbacks run on kazoo's event thread and must not block; ``watch_children`` does not report the
children seen when the watch is set, only later changes. Thread-safe (kazoo's client is).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import NodeExistsError, NoNodeError
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from spark_kafkalog.legacy.broker_endpoints import select_endpoint

__all__ = ["ConsumerRegistration", "ZkConsumerRegistry"]

log = logging.getLogger(__name__)

BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class ConsumerRegistration:
    """The value of ``/consumers/<group>/ids/<consumer_id>``."""

    __slots__ = ("subscription", "pattern", "timestamp")

    def __init__(self, subscription: Mapping[str, int], pattern: str, timestamp: str = "") -> None:
        self.subscription = dict(subscription)
        self.pattern = pattern
        self.timestamp = timestamp or str(int(time.time() * 1000))

    def to_json(self) -> bytes:
        return _dumps(
            {"version": 1, "subscription": self.subscription, "pattern": self.pattern, "timestamp": self.timestamp}
        )

    @classmethod
    def from_json(cls, data: bytes, what: str) -> ConsumerRegistration:
        try:
            obj = json.loads(data)
            return cls({str(k): int(v) for k, v in obj["subscription"].items()}, obj["pattern"], str(obj["timestamp"]))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{what}: malformed consumer registration {data[:200]!r}") from e


class ZkConsumerRegistry:
    """A kazoo session and the 0.8 consumer znodes (see the module docstring)."""

    def __init__(self, connect: str, *, session_timeout_ms: int = 6000, connection_timeout_ms: int = 6000) -> None:
        self.connect = connect
        self._connection_timeout_s = connection_timeout_ms / 1000.0
        self._session_timeout_ms = session_timeout_ms
        self.zk = KazooClient(hosts=connect, timeout=session_timeout_ms / 1000.0)
        self._watches: list[ChildrenWatch | DataWatch] = []
        self._watching = True  # a watch callback returning False ends kazoo's recipe watch
        self._listeners: list[Callable[[], None]] = []
        self._lost = False

    # lifecycle ---------------------------------------------------------------------------------
    def start(self) -> ZkConsumerRegistry:
        self.zk.add_listener(self._on_state)
        self.zk.start(timeout=self._connection_timeout_s)
        return self

    def close(self) -> None:
        """Close the session (ZooKeeper deletes its ephemeral nodes). Idempotent."""
        self.cancel_watches()
        try:
            self.zk.stop()
            self.zk.close()
        except Exception:  # noqa: BLE001 - closing a broken session must not fail the caller
            log.debug("closing the ZooKeeper client failed", exc_info=True)

    @property
    def session_id(self) -> int:
        return self.zk.client_id[0] if self.zk.client_id else 0

    def on_new_session(self, callback: Callable[[], None]) -> None:
        """``callback()`` (not blocking) once connected again after the session expired: ephemeral nodes are gone."""
        self._listeners.append(callback)

    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self._lost = True
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            for callback in self._listeners:
                callback()

    # watches -----------------------------------------------------------------------------------
    def watch_children(self, path: str, callback: Callable[[list[str]], None]) -> None:
        """``callback(children)`` on every later change of ``path``'s children (the path is created if absent)."""
        self.zk.ensure_path(path)
        first = [True]

        def changed(children: list[str]) -> bool:
            if not self._watching:
                return False
            if first[0]:
                first[0] = False
            else:
                callback(sorted(children))
            return True

        self._watches.append(ChildrenWatch(self.zk, path, changed))

    def watch_data(self, path: str, callback: Callable[[], None]) -> None:
        """``callback()`` on every later change (or creation, deletion) of the node ``path``."""
        first = [True]

        def changed(data: bytes | None, stat: object) -> bool:
            if not self._watching:
                return False
            if first[0]:
                first[0] = False
            else:
                callback()
            return True

        self._watches.append(DataWatch(self.zk, path, changed))

    def cancel_watches(self) -> None:
        """Stop every watch: a later change ends it instead of calling back."""
        self._watching = False
        self._watches.clear()

    # brokers and topics ------------------------------------------------------------------------
    def broker_ids(self) -> list[int]:
        """The ids of the live brokers (the children of ``/brokers/ids``)."""
        return sorted(int(child) for child in self._children(BROKER_IDS) if child.isdigit())

    def brokers(self, security_protocol: str = "PLAINTEXT", listener_name: str | None = None) -> dict[int, str]:
        """``{broker id: "host:port"}`` of the live brokers, each its endpoint for ``security_protocol`` (or the
        listener ``listener_name``); raises ``BrokerEndPointNotAvailableException`` naming a broker without
        one. A malformed registration is logged and left out."""
        out = {}
        for child in self._children(BROKER_IDS):
            try:
                data, _ = self.zk.get(f"{BROKER_IDS}/{child}")
                obj = json.loads(data)
                if not isinstance(obj, dict):
                    raise ValueError(f"not a JSON object: {data[:200]!r}")
                out[int(child)] = select_endpoint(int(child), obj, security_protocol, listener_name)
            except NoNodeError:
                continue
            except (ValueError, KeyError, TypeError) as e:
                log.warning("ignoring malformed broker registration %s/%s: %s", BROKER_IDS, child, e)
        return dict(sorted(out.items()))

    def topics(self) -> list[str]:
        return self._children(BROKER_TOPICS)

    def partitions(self, topic: str) -> list[int]:
        """Partition ids of ``topic`` from its assignment node (``[]`` when the topic does not exist)."""
        try:
            data, _ = self.zk.get(f"{BROKER_TOPICS}/{topic}")
        except NoNodeError:
            return []
        try:
            return sorted(int(p) for p in json.loads(data)["partitions"])
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{BROKER_TOPICS}/{topic}: malformed assignment {data[:200]!r}") from e

    # consumer id registry ----------------------------------------------------------------------
    @staticmethod
    def ids_path(group: str) -> str:
        return f"/consumers/{group}/ids"

    def register_consumer(self, group: str, consumer_id: str, registration: ConsumerRegistration) -> None:
        """Create the ephemeral ids node; a node left by this consumer's expired session is waited out
        (ZooKeeper removes it within the session timeout), one of this session is overwritten."""
        path = f"{self.ids_path(group)}/{consumer_id}"
        deadline = time.monotonic() + self._session_timeout_ms / 1000.0 * 2 + 5
        while True:
            try:
                self.zk.create(path, registration.to_json(), ephemeral=True, makepath=True)
                return
            except NodeExistsError:
                try:
                    _, stat = self.zk.get(path)
                except NoNodeError:
                    continue
                if stat.ephemeralOwner == self.session_id:
                    self.zk.set(path, registration.to_json())
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{path} is held by another live ZooKeeper session: is consumer.id reused?"
                    ) from None
                time.sleep(0.2)

    def unregister_consumer(self, group: str, consumer_id: str) -> None:
        try:
            self.zk.delete(f"{self.ids_path(group)}/{consumer_id}")
        except NoNodeError:
            pass

    def consumers(self, group: str) -> list[str]:
        return self._children(self.ids_path(group))

    def registration(self, group: str, consumer_id: str) -> ConsumerRegistration | None:
        path = f"{self.ids_path(group)}/{consumer_id}"
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return ConsumerRegistration.from_json(data, path)

    # partition owner registry ------------------------------------------------------------------
    @staticmethod
    def owner_path(group: str, topic: str, partition: int) -> str:
        return f"/consumers/{group}/owners/{topic}/{partition}"

    def claim(self, group: str, topic: str, partition: int, thread_id: str) -> bool:
        """Create the ephemeral owner node; False while another thread owns the partition."""
        path = self.owner_path(group, topic, partition)
        try:
            self.zk.create(path, thread_id.encode(), ephemeral=True, makepath=True)
            return True
        except NodeExistsError:
            return self.owner(group, topic, partition) == thread_id

    def release(self, group: str, topic: str, partition: int, thread_id: str) -> None:
        """Delete the owner node if ``thread_id`` holds it."""
        path = self.owner_path(group, topic, partition)
        try:
            data, stat = self.zk.get(path)
            if data.decode() == thread_id:
                self.zk.delete(path, version=stat.version)
        except NoNodeError:
            pass

    def owner(self, group: str, topic: str, partition: int) -> str | None:
        try:
            data, _ = self.zk.get(self.owner_path(group, topic, partition))
        except NoNodeError:
            return None
        return data.decode()

    # offsets -----------------------------------------------------------------------------------
    @staticmethod
    def offset_path(group: str, topic: str, partition: int) -> str:
        return f"/consumers/{group}/offsets/{topic}/{partition}"

    def read_offset(self, group: str, topic: str, partition: int) -> int | None:
        path = self.offset_path(group, topic, partition)
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        try:
            return int(data.decode().strip())
        except ValueError:
            log.warning("ignoring malformed offset %r at %s", data[:40], path)
            return None

    def write_offset(self, group: str, topic: str, partition: int, offset: int) -> None:
        path = self.offset_path(group, topic, partition)
        value = str(int(offset)).encode()
        try:
            self.zk.set(path, value)
        except NoNodeError:
            try:
                self.zk.create(path, value, makepath=True)
            except NodeExistsError:
                self.zk.set(path, value)

    # helpers -----------------------------------------------------------------------------------
    def _children(self, path: str) -> list[str]:
        try:
            return sorted(self.zk.get_children(path))
        except NoNodeError:
            return []
