"""ZooKeeper implementation of ``EntityConfigStore``: user and client quota entity config nodes and the config
change notifications (a ``ZooKeeperRegistry`` mixin).

Node paths and formats are ``zk_layout``'s and ``quota_entities``' (Kafka's ``ConfigEntityZNode``)::

    /config/users/<u>, /config/clients/<c>, /config/users/<u>/clients/<c>   {"version":1,"config":{...}}
    /config/client-metrics/<name>                                             (same; ``client_metrics_entities``)
    /config/groups/<group id>                                                 (same; ``group_config_entities``)
    /config/changes/config_change_<10-digit seq>                              {"version":2,"entity_path":"users/<u>"}

A write is one transaction (the entity node compare-and-set with its version, or its creation with null-data
parents, plus the change notification), retried up to ``CONFIG_WRITE_ATTEMPTS`` times when another writer got in
between; every key the update does not name is kept (a user's SCRAM credentials beside its quotas). Old
notifications are purged after a write by ``ZooKeeperRegistry._purge_config_changes``. Thread-safe as every
``ZooKeeperRegistry`` method. No kazoo name appears here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from broker.cluster import client_metrics_entities as cme
from broker.cluster import group_config_entities as gce
from broker.cluster import quota_entities as qe
from broker.cluster import zk_layout as zl
from broker.cluster.entity_configs import EntityConfigStore
from broker.cluster.registry import StaleStateError
from broker.cluster.zk_nodes import BadVersionError, CreateOp, NodeExistsError, NoNodeError, SetOp
from broker.cluster.zk_notifications import notifications_since

if TYPE_CHECKING:
    from broker.cluster.entity_configs import QuotaEntity
    from broker.cluster.zk_session import ZooKeeperSession

__all__ = ["ZooKeeperEntityConfigStore", "CONFIG_WRITE_ATTEMPTS"]

log = logging.getLogger(__name__)

CONFIG_WRITE_ATTEMPTS = 10
"""Attempts of a config write (entity, topic or broker) whose node keeps changing before ``StaleStateError``."""


class ZooKeeperEntityConfigStore(EntityConfigStore):
    """The ``EntityConfigStore`` methods of ``ZooKeeperRegistry``, over its session ``_zk``."""

    _zk: ZooKeeperSession

    def _purge_config_changes(self) -> None:
        """Delete old ``/config/changes`` notifications after a write (``ZooKeeperRegistry`` implements it; its
        topic and broker config writes purge too)."""
        raise NotImplementedError

    def user_config(self, user: str) -> dict[str, str]:
        path = zl.user_config_path(user)
        node = self._zk.get_if_exists(path)
        return {} if node is None else zl.decode_user_config(path, node[0])

    def user_configs(self) -> dict[str, dict[str, str]]:
        out = {}
        for child in sorted(self._zk.children(zl.USERS_CONFIG)):
            path = f"{zl.USERS_CONFIG}/{child}"
            node = self._zk.get_if_exists(path)
            if node is None:
                continue
            try:
                out[zl.desanitize_entity_name(child)] = zl.decode_user_config(path, node[0])
            except ValueError as exc:  # one malformed node must not hide every other user
                log.warning("skipping user entity %s: %s", path, exc)
        return out

    def alter_user_config(self, user: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        return self._alter_entity_config(zl.user_config_path(user), f"users/{zl.sanitize_entity_name(user)}", updates)

    def quota_config(self, entity: QuotaEntity) -> dict[str, str]:
        path = qe.quota_config_path(entity)
        node = self._zk.get_if_exists(path)
        return {} if node is None else zl.decode_user_config(path, node[0])

    def quota_configs(self) -> dict[QuotaEntity, dict[str, str]]:
        out: dict[QuotaEntity, dict[str, str]] = {}
        for root, segment in ((zl.USERS_CONFIG, "users"), (qe.CLIENTS_CONFIG, "clients")):
            for child in sorted(self._zk.children(root)):
                self._read_quota_entity(f"{segment}/{child}", out)
                if segment == "users":
                    try:
                        clients = self._zk.children(f"{root}/{child}/clients")
                    except NoNodeError:
                        continue
                    for client in sorted(clients):
                        self._read_quota_entity(f"users/{child}/clients/{client}", out)
        return out

    def _read_quota_entity(self, entity_path: str, out: dict[QuotaEntity, dict[str, str]]) -> None:
        """Add the entity at ``/config/<entity_path>`` to ``out`` when its node holds a config."""
        entity = qe.parse_quota_entity_path(entity_path)
        path = f"/config/{entity_path}"
        if entity is None:
            log.warning("skipping quota entity %s: not a user or client-id entity name", path)
            return
        node = self._zk.get_if_exists(path)
        if node is None:
            return
        try:
            config = zl.decode_user_config(path, node[0])
        except ValueError as exc:  # one malformed node must not hide every other entity
            log.warning("skipping quota entity %s: %s", path, exc)
            return
        if config:
            out[entity] = config

    def alter_quota_config(self, entity: QuotaEntity, updates: Mapping[str, str | None]) -> dict[str, str]:
        return self._alter_entity_config(qe.quota_config_path(entity), qe.quota_entity_path(entity), updates)

    def client_metrics_config(self, name: str) -> dict[str, str]:
        path = cme.client_metrics_config_path(name)
        node = self._zk.get_if_exists(path)
        return {} if node is None else zl.decode_user_config(path, node[0])

    def client_metrics_configs(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        try:
            children = self._zk.children(cme.CLIENT_METRICS_CONFIG)
        except NoNodeError:
            return out
        for child in sorted(children):
            path = f"{cme.CLIENT_METRICS_CONFIG}/{child}"
            name = cme.parse_client_metrics_entity_path(f"{cme.CLIENT_METRICS_SEGMENT}/{child}")
            node = self._zk.get_if_exists(path)
            if name is None or node is None:
                continue
            try:
                config = zl.decode_user_config(path, node[0])
            except ValueError as exc:  # one malformed node must not hide every other subscription
                log.warning("skipping client metrics subscription %s: %s", path, exc)
                continue
            if config:
                out[name] = config
        return out

    def alter_client_metrics_config(self, name: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        return self._alter_entity_config(
            cme.client_metrics_config_path(name), cme.client_metrics_entity_path(name), updates
        )

    def group_config(self, group_id: str) -> dict[str, str]:
        path = gce.group_config_path(group_id)
        node = self._zk.get_if_exists(path)
        return {} if node is None else zl.decode_user_config(path, node[0])

    def group_configs(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        try:
            children = self._zk.children(gce.GROUPS_CONFIG)
        except NoNodeError:
            return out
        for child in sorted(children):
            path = f"{gce.GROUPS_CONFIG}/{child}"
            group_id = gce.parse_group_entity_path(f"{gce.GROUPS_SEGMENT}/{child}")
            node = self._zk.get_if_exists(path)
            if group_id is None or node is None:
                continue
            try:
                config = zl.decode_user_config(path, node[0])
            except ValueError as exc:  # one malformed node must not hide every other group
                log.warning("skipping group config %s: %s", path, exc)
                continue
            if config:
                out[group_id] = config
        return out

    def alter_group_config(self, group_id: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        return self._alter_entity_config(gce.group_config_path(group_id), gce.group_entity_path(group_id), updates)

    def _alter_entity_config(self, path: str, entity_path: str, updates: Mapping[str, str | None]) -> dict[str, str]:
        """Read-modify-write of the entity node ``path``: a compare-and-set on the node's version (a create, with
        its parents, when it is missing) in one transaction with the change notification naming
        ``entity_path``; retried when the node moved meanwhile."""
        change = zl.encode_config_change(entity_path.split("/", 1)[1], entity_path.split("/", 1)[0])
        for _ in range(CONFIG_WRITE_ATTEMPTS):
            node = self._zk.get_if_exists(path)
            current = {} if node is None else zl.decode_user_config(path, node[0])
            config = zl.apply_config_updates(current, updates)
            data = zl.encode_topic_config(config)
            if node is None:
                self._zk.ensure_path(path.rsplit("/", 1)[0])
            write = CreateOp(path, data) if node is None else SetOp(path, data, node[1].version)
            try:
                self._zk.commit([write, CreateOp(zl.CONFIG_CHANGE_PREFIX, change, sequential=True)])
                self._purge_config_changes()
                return config
            except (NodeExistsError, NoNodeError, BadVersionError) as exc:
                log.debug("altering %s: %s; retrying", path, exc)
                if isinstance(exc, NoNodeError) and exc.path in (path, zl.CONFIG_CHANGE_PREFIX):
                    self._zk.ensure_path(exc.path.rsplit("/", 1)[0])
        raise StaleStateError(f"entity config {path}: node kept changing; gave up after {CONFIG_WRITE_ATTEMPTS}")

    def config_changes_since(self, after: int) -> tuple[int, list[str] | None]:
        """Notifications are purged (``CONFIG_CHANGES_KEPT`` newest kept, Kafka: 15 minutes) and sequence numbers
        skip (ZooKeeper's counter also counts deletions): ``after`` is known complete only while a notification
        numbered ``after`` or lower is still there, or none is left at all. An undecodable notification is logged
        and skipped."""

        def skip(exc: ValueError) -> bool:
            log.warning("ignoring config change notification: %s", exc)
            return True

        return notifications_since(
            self._zk,
            zl.CONFIG_CHANGES,
            after,
            sequence=zl.config_change_sequence,
            decode=lambda data, what: zl.decode_config_change(data, what=what),
            undecodable=skip,
        )
