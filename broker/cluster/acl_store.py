"""``AclStore``: the part of ``ClusterRegistry`` that stores ACLs and their change notifications.

Nodes (Kafka's ZooKeeper formats, read and written by ``zk_layout``)::

    /kafka-acl/<Type>/<name>                        literal patterns: {"version":1,"acls":[{"principal":"User:alice",
                                                    "permissionType":"Allow","operation":"Read","host":"*"}]}
    /kafka-acl-extended/prefixed/<Type>/<prefix>    prefixed patterns (same format)
    /kafka-acl-changes/acl_changes_<10-digit seq>   TOPIC:foo after a change of a literal pattern (UTF-8)
    /kafka-acl-extended-changes/acl_changes_<10-digit seq>   after a change of any other pattern:
                                  {"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}

Concurrency: as every ``ClusterRegistry`` method (see ``broker.cluster.registry``), these are thread-safe;
``update_resource_acls`` is a compare-and-set, retried when another writer got in between; ``on_acl_changes``
callbacks run on the registry's dispatcher thread. Nothing here imports kazoo.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING

from spark_kafkalog.security.acl import AccessControlEntry, ResourcePattern

if TYPE_CHECKING:
    from broker.cluster.subscription import Subscription

__all__ = ["AclStore"]


class AclStore(abc.ABC):
    """Every resource pattern's ACL entries, their read-modify-write, and the change notifications that tell other
    brokers' authorizers about them. A mixin of ``ClusterRegistry``."""

    # ACLs: /kafka-acl/<Type>/<name>, /kafka-acl-extended/prefixed/<Type>/<prefix> (formats: zk_layout)
    @abc.abstractmethod
    def all_acls(self) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
        """Every stored resource pattern with its entries (patterns without entries are left out)."""

    @abc.abstractmethod
    def resource_acls(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        """One pattern's entries (empty when it has none); ValueError for a pattern no ACL can have (a name
        containing "/", type ANY, pattern type MATCH ...)."""

    @abc.abstractmethod
    def update_resource_acls(
        self,
        pattern: ResourcePattern,
        update: Callable[[frozenset[AccessControlEntry]], frozenset[AccessControlEntry]],
    ) -> frozenset[AccessControlEntry]:
        """Read-modify-write of one pattern's entries: ``update(current)`` gives the new set, written with a
        compare-and-set on the node's version (a create when missing, a delete when the new set is empty);
        when another writer got in between it is read and applied again (up to 10 attempts, 100-150 ms apart,
        then StaleStateError), so ``update`` must be a pure function of its argument. A change leaves a
        notification (literal: ``/kafka-acl-changes``, else ``/kafka-acl-extended-changes``) and purges
        notifications older than 15 minutes; an unchanged set writes nothing. Returns the entries stored now.
        ValueError as ``resource_acls``."""

    @abc.abstractmethod
    def acl_changes_since(self, after: int, extended: bool) -> tuple[int, list[ResourcePattern] | None]:
        """The ACL change notifications of one directory (``extended`` False: ``/kafka-acl-changes``, True:
        ``/kafka-acl-extended-changes``) numbered above ``after``: ``(highest sequence number seen, the patterns
        they name, in order)``; the highest is ``after`` when there is none. The list is None when ``after`` is
        negative, when notifications after it may have been purged, or when one cannot be decoded: the reader
        then re-reads every ACL."""

    @abc.abstractmethod
    def on_acl_changes(self, callback: Callable[[], None]) -> Subscription:
        """Watch both ACL change directories: ``callback()`` once at registration and after each change of
        their children (then call ``acl_changes_since`` for each). Creates the ACL paths Kafka's authorizer
        creates (``zk_layout.acl_required_paths``) when missing."""
