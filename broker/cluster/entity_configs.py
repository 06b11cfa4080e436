"""``EntityConfigStore``: the part of ``ClusterRegistry`` that stores user and client quota entity configs,
client metrics subscriptions and group configs.

Nodes (JSON, UTF-8, Kafka's ZooKeeper formats; paths and names: ``zk_layout`` and ``quota_entities``)::

    /config/users/<sanitized user>                 {"version":1,"config":{"SCRAM-SHA-256":"salt=<b64>,...",
                                                    "producer_byte_rate":"1024"}}
    /config/clients/<sanitized client id>          {"version":1,"config":{"consumer_byte_rate":"2048"}}
    /config/users/<u>/clients/<c>                  (same format; the parents may hold null data)
    /config/client-metrics/<sanitized name>        {"version":1,"config":{"metrics":"*","interval.ms":"1000"}}
    /config/groups/<sanitized group id>            {"version":1,"config":{"share.auto.offset.reset":"earliest"}}
    /config/changes/config_change_<10-digit seq>   {"version":2,"entity_path":"users/<u>"} after each write

Also ``QuotaEntity``, the type naming a client quota entity. Concurrency: as every ``ClusterRegistry`` method
(see ``broker.cluster.registry``), these are thread-safe; writes are compare-and-set, retried when another
writer got in between. Nothing here imports kazoo.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping

__all__ = ["QuotaEntity", "EntityConfigStore"]

QuotaEntity = tuple[tuple[str, str | None], ...]
"""A client quota entity: sorted ``(entity type, name or None for <default>)`` pairs, types ``"client-id"`` and
``"user"`` (``broker.cluster.quota_entities`` has its paths and checks)."""


class EntityConfigStore(abc.ABC):
    """User entity configs (SCRAM credentials, quota keys) and client quota entity configs, with the config change
    notifications that tell other brokers about them. A mixin of ``ClusterRegistry``."""

    # user entities: /config/users/<sanitized user> (SCRAM credentials; quota keys are kept as they are)
    @abc.abstractmethod
    def user_config(self, user: str) -> dict[str, str]:
        """Every key of the user's entity config (``SCRAM-SHA-256``, ``producer_byte_rate`` ...); empty when the
        user has no config node. ValueError for an empty name."""

    @abc.abstractmethod
    def user_configs(self) -> dict[str, dict[str, str]]:
        """The config of every user entity that has a node, by user name (desanitized; ``<default>`` included)."""

    @abc.abstractmethod
    def alter_user_config(self, user: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        """Set (a string) or remove (None) keys of the user's config, keeping every other key, and leave a
        ``users/<sanitized user>`` change notification; the node is created when missing and compare-and-set
        otherwise (retried when another writer got in between). Returns the config written."""

    # client quota entities: /config/users/<u>, /config/clients/<c>, /config/users/<u>/clients/<c>
    # (entities and paths: broker.cluster.quota_entities)
    @abc.abstractmethod
    def quota_config(self, entity: QuotaEntity) -> dict[str, str]:
        """Every key of the entity's config node (a user's SCRAM credentials included); empty when it has no
        node. ValueError for an entity ``quota_entities.check_quota_entity`` refuses."""

    @abc.abstractmethod
    def quota_configs(self) -> dict[QuotaEntity, dict[str, str]]:
        """Every user, client-id and user/client-id entity whose node holds a non-empty config, with every key
        of it (names desanitized, None for ``<default>``); a malformed node is logged and left out."""

    @abc.abstractmethod
    def alter_quota_config(self, entity: QuotaEntity, updates: Mapping[str, str | None]) -> dict[str, str]:
        """Set (a string) or remove (None) keys of the entity's config, keeping every other key (a user's SCRAM
        credentials), and leave a change notification naming ``quota_entity_path(entity)``; the node (and its
        parents, with null data) is created when missing and compare-and-set otherwise, as
        ``alter_user_config``. Returns the config written. ValueError as ``quota_config``."""

    # client metrics subscriptions (KIP-714): /config/client-metrics/<name> (broker.cluster.client_metrics_entities)
    @abc.abstractmethod
    def client_metrics_config(self, name: str) -> dict[str, str]:
        """The keys the subscription ``name`` sets (``metrics``, ``interval.ms``, ``match``); empty when it has no
        node. ValueError for an empty name."""

    @abc.abstractmethod
    def client_metrics_configs(self) -> dict[str, dict[str, str]]:
        """Every subscription whose node holds a non-empty config, by name (desanitized); a malformed node is
        logged and left out."""

    @abc.abstractmethod
    def alter_client_metrics_config(self, name: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        """Set (a string) or remove (None) keys of the subscription's config, keeping every other key, and leave a
        ``client-metrics/<sanitized name>`` change notification, as ``alter_user_config`` (compare-and-set,
        retried). Returns the config written. ValueError for an empty name."""

    # group configs (KIP-848/KIP-932 GROUP resources): /config/groups/<group id> (broker.cluster.group_config_entities)
    @abc.abstractmethod
    def group_config(self, group_id: str) -> dict[str, str]:
        """The keys the group's config sets (``share.auto.offset.reset`` ...); empty when it has no node.
        ValueError for an empty id."""

    @abc.abstractmethod
    def group_configs(self) -> dict[str, dict[str, str]]:
        """Every group whose node holds a non-empty config, by group id (desanitized); a malformed node is logged
        and left out."""

    @abc.abstractmethod
    def alter_group_config(self, group_id: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        """Set (a string) or remove (None) keys of the group's config, keeping every other key, and leave a
        ``groups/<sanitized group id>`` change notification, as ``alter_user_config`` (compare-and-set, retried).
        Returns the config written. ValueError for an empty id."""

    @abc.abstractmethod
    def config_changes_since(self, after: int) -> tuple[int, list[str] | None]:
        """The config change notifications (``/config/changes``) with a sequence number above ``after``:
        ``(highest sequence number seen, their entity paths in order)``, e.g. ``(7, ["users/alice"])``; the
        highest is ``after`` when there is none. The list is None when ``after`` is negative or notifications
        after it may have been purged: the reader then re-reads everything it follows."""
