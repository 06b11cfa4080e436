"""ZooKeeper implementation of ``AclStore``: ACL nodes and their change notifications (a ``ZooKeeperRegistry`` mixin).

Node paths and formats are ``zk_layout``'s (Kafka's ``ZkAclStore`` / ``ZkAclChangeStore``)::

    /kafka-acl/<Type>/<name>, /kafka-acl-extended/prefixed/<Type>/<prefix>    {"version":1,"acls":[...]}
    /kafka-acl-changes/acl_changes_<10-digit seq>, /kafka-acl-extended-changes/acl_changes_<10-digit seq>

A write is one transaction (the ACL node compare-and-set with its version, plus the change notification), retried
with a short random back-off when another writer got in between; notifications older than
``zk_layout.ACL_CHANGE_EXPIRY_S`` are purged after a write. Thread-safe as every ``ZooKeeperRegistry`` method; the
``on_acl_changes`` callback runs on the session's dispatcher thread. No kazoo name appears here.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from broker.cluster import zk_layout as zl
from broker.cluster.acl_store import AclStore
from broker.cluster.registry import RegistryError, StaleStateError
from broker.cluster.zk_nodes import BadVersionError, CreateOp, DeleteOp, NodeExistsError, NoNodeError, SetOp
from broker.cluster.zk_notifications import notifications_since
from spark_kafkalog.security.acl import AccessControlEntry, ResourcePattern

if TYPE_CHECKING:
    from broker.cluster.subscription import Subscription
    from broker.cluster.zk_session import Watcher, ZooKeeperSession

__all__ = ["ZooKeeperAclStore"]

log = logging.getLogger(__name__)

_ACL_WRITE_ATTEMPTS = 10
_ACL_RETRY_BACKOFF_S = (0.1, 0.15)


class ZooKeeperAclStore(AclStore):
    """The ``AclStore`` methods of ``ZooKeeperRegistry``, over its session ``_zk``."""

    _zk: ZooKeeperSession

    def all_acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        out: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}
        for pattern_type, root in zl.ACL_ROOTS.items():
            for type_child in self._children_or_empty(root):
                type_path = f"{root}/{type_child}"
                of_type = zl.parse_acl_store(pattern_type, type_child, "-")
                if of_type is None:
                    log.warning("ignoring ACL nodes under %s%s: unknown resource type", self._zk.chroot, type_path)
                    continue
                for name in self._children_or_empty(type_path):
                    pattern = ResourcePattern(of_type.resource_type, name, pattern_type)
                    node = self._zk.get_if_exists(f"{type_path}/{name}")
                    if node is None:
                        continue
                    try:
                        entries = zl.decode_acls(node[0], what=f"{self._zk.chroot}{type_path}/{name}")
                    except ValueError as exc:  # one malformed node must not hide every other ACL
                        log.warning("ignoring ACL node: %s", exc)
                        continue
                    if entries:
                        out[pattern] = entries
        return out

    def _children_or_empty(self, path: str) -> list[str]:
        try:
            return sorted(self._zk.children(path))
        except NoNodeError:
            return []

    def resource_acls(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        path = zl.acl_path(pattern)
        node = self._zk.get_if_exists(path)
        return frozenset() if node is None else zl.decode_acls(node[0], what=f"{self._zk.chroot}{path}")

    def update_resource_acls(
        self,
        pattern: ResourcePattern,
        update: Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]],
    ) -> frozenset[AccessControlEntry]:
        """Kafka's ``updateResourceAcls``: the node written (set with its version, created, or deleted with its
        version when no entry is left) in one transaction with the change notification."""
        path = zl.acl_path(pattern)
        change_dir = zl.acl_change_dir(pattern.pattern_type)
        change = CreateOp(f"{change_dir}/{zl.ACL_CHANGE_PREFIX}", zl.encode_acl_change(pattern), sequential=True)
        for attempt in range(_ACL_WRITE_ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(*_ACL_RETRY_BACKOFF_S))
            node = self._zk.get_if_exists(path)
            current = frozenset() if node is None else zl.decode_acls(node[0], what=f"{self._zk.chroot}{path}")
            new = frozenset(update(current))
            if new == current:
                return current
            if node is None:
                write: CreateOp | SetOp | DeleteOp = CreateOp(path, zl.encode_acls(new))
            elif new:
                write = SetOp(path, zl.encode_acls(new), node[1].version)
            else:
                write = DeleteOp(path, node[1].version)
            try:
                self._zk.commit([write, change])
            except (NodeExistsError, NoNodeError, BadVersionError) as exc:
                log.debug("update_resource_acls(%s): %s; retrying", pattern, exc)
                if isinstance(exc, NoNodeError) and exc.path in (path, change.path):  # a parent may be missing
                    self._zk.ensure_path(exc.path.rsplit("/", 1)[0])
                continue
            self._purge_acl_changes(change_dir)
            return new
        raise StaleStateError(
            f"ACLs of {pattern}: node {self._zk.chroot}{path} kept changing; gave up after {_ACL_WRITE_ATTEMPTS} attempts"
        )

    def _purge_acl_changes(self, change_dir: str) -> None:
        """Delete the notifications older than ``zl.ACL_CHANGE_EXPIRY_S`` (by their creation time on the server;
        a concurrent purge's deletions are fine), except the newest: a reader whose position is below it then
        knows that it may have missed some (``acl_changes_since``)."""
        cutoff_ms = (time.time() - zl.ACL_CHANGE_EXPIRY_S) * 1000
        try:
            numbered = sorted(c for c in self._zk.children(change_dir) if zl.acl_change_sequence(c) is not None)
            for child in numbered[:-1]:
                stat = self._zk.exists(f"{change_dir}/{child}")
                if stat is None:
                    continue
                if stat.created_ms >= cutoff_ms:
                    break  # sequence order is creation order: the rest are newer
                try:
                    self._zk.delete(f"{change_dir}/{child}")
                except NoNodeError:
                    pass
        except RegistryError as exc:  # the write itself succeeded; the next one purges
            log.debug("purging ACL change notifications: %s", exc)

    def acl_changes_since(self, after: int, extended: bool) -> tuple[int, list[ResourcePattern] | None]:
        """As ``config_changes_since``: sequence numbers skip (ZooKeeper's counter also counts deletions), so
        ``after`` is known complete only while a notification numbered ``after`` or lower is still there, or
        none is left at all (after a quiet quarter of an hour the next change therefore reloads everything).
        An undecodable notification is logged and the reader reloads every ACL."""

        def reload(exc: ValueError) -> bool:
            log.warning("reloading every ACL: %s", exc)
            return False

        return notifications_since(
            self._zk,
            zl.ACL_CHANGE_DIRS[extended],
            after,
            sequence=zl.acl_change_sequence,
            decode=lambda data, what: zl.decode_acl_change(data, extended=extended, what=what),
            undecodable=reload,
            missing_ok=True,
        )

    def on_acl_changes(self, callback: Callable[[], None]) -> Subscription:
        for path in zl.acl_required_paths():
            self._zk.ensure_path(path)

        def read(watch: Watcher) -> tuple[int, ...]:
            return tuple(len(self._zk.children(d, watch)) for d in zl.ACL_CHANGE_DIRS.values())

        return self._zk.watch("acl-changes", read, lambda _counts: callback())
