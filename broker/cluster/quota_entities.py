"""Client quota entities and where Kafka keeps their configs in ZooKeeper (pure; no I/O).

An entity is a sorted tuple of ``(entity type, name)`` pairs, the types ``"client-id"`` and ``"user"`` as in
DescribeClientQuotas, a name of None being the ``<default>`` entity: ``(("user", "alice"),)``,
``(("client-id", None),)``, ``(("client-id", "app"), ("user", "alice"))``. Its config node, relative to the
chroot, and the entity path its change notices under ``/config/changes`` carry (Kafka's ``ZkData`` /
``AdminZkClient``; names sanitized with ``sanitize_entity_name``, ``<default>`` kept as it is)::

    users/<u>                 /config/users/<u>                {"version":1,"config":{"producer_byte_rate":"1024"}}
    clients/<c>               /config/clients/<c>              (same format)
    users/<u>/clients/<c>     /config/users/<u>/clients/<c>    (same; the parents may hold null data)

The user node is shared with the SCRAM credentials (``SCRAM-SHA-256`` ...): writers of either kind keep the
other's keys. Thread-safe (pure functions and constants).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .registry import QuotaEntity
from .zk_layout import BROKER_DEFAULT_ENTITY, desanitize_entity_name, sanitize_entity_name

__all__ = [
    "QuotaEntity",
    "USER",
    "CLIENT_ID",
    "IP",
    "DEFAULT_ENTITY",
    "CLIENTS_CONFIG",
    "QUOTA_KEYS",
    "quota_entity",
    "quota_entity_path",
    "quota_config_path",
    "parse_quota_entity_path",
    "quota_keys_of",
]

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
"""The entity type of connection-rate quotas (``/config/ips``), which kafkalog does not store."""
DEFAULT_ENTITY = BROKER_DEFAULT_ENTITY
"""``<default>``: the name of the default entity in paths and change notices."""
CLIENTS_CONFIG = "/config/clients"

QUOTA_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate")
"""Kafka's user and client-id quota keys (``QuotaConfigs``); the user node's other keys are SCRAM credentials."""

_SEGMENT = {USER: "users", CLIENT_ID: "clients"}


def quota_entity(
    user: str | None = None, client_id: str | None = None, *, has_user: bool = False, has_client_id: bool = False
) -> QuotaEntity:
    """The entity of a user and/or a client id; a type is part of it when its name is given or its ``has_*``
    flag is set (then a None name is ``<default>``). ValueError for no type, an empty name or the literal
    ``<default>`` given as a name (say None)."""
    pairs = []
    if client_id is not None or has_client_id:
        pairs.append((CLIENT_ID, client_id))
    if user is not None or has_user:
        pairs.append((USER, user))
    return check_quota_entity(pairs)


def check_quota_entity(pairs: Iterable[tuple[str, str | None]]) -> QuotaEntity:
    """``pairs`` as a ``QuotaEntity`` (sorted); ValueError naming what is wrong: no pair, a type other than
    ``user``/``client-id``, a type twice, an empty name or a name spelled ``<default>``."""
    entity = tuple(sorted(pairs, key=lambda p: p[0]))
    types = [t for t, _ in entity]
    if not entity:
        raise ValueError("a quota entity needs a user, a client-id or both")
    if len(set(types)) != len(types):
        raise ValueError(f"quota entity {entity!r} names an entity type twice")
    for entity_type, name in entity:
        if entity_type not in _SEGMENT:
            raise ValueError(f"unknown quota entity type {entity_type!r} (expected {USER!r} or {CLIENT_ID!r})")
        if name is not None and (not isinstance(name, str) or not name or name == DEFAULT_ENTITY):
            raise ValueError(f"invalid {entity_type} name {name!r} (None is the default entity)")
    return entity


def _segment(name: str | None) -> str:
    return DEFAULT_ENTITY if name is None else sanitize_entity_name(name)


def quota_entity_path(entity: QuotaEntity) -> str:
    """The entity path of change notices: ``users/alice``, ``clients/<default>``, ``users/a/clients/c`` (the user part first)."""
    names = dict(check_quota_entity(entity))
    parts = [f"{_SEGMENT[t]}/{_segment(names[t])}" for t in (USER, CLIENT_ID) if t in names]
    return "/".join(parts)


def quota_config_path(entity: QuotaEntity) -> str:
    """The config node: ``/config/`` + ``quota_entity_path(entity)``."""
    return f"/config/{quota_entity_path(entity)}"


def parse_quota_entity_path(entity_path: str) -> QuotaEntity | None:
    """The entity of a change notice's entity path (``users/a``, ``clients/c``, ``users/a/clients/c``); None for
    any other path (``topics/t``, ``brokers/1``, ``ips/..``) or one that does not desanitize."""
    parts = entity_path.split("/")
    try:
        names = [None if p == DEFAULT_ENTITY else desanitize_entity_name(p) for p in parts[1::2]]
    except UnicodeDecodeError:
        return None
    if any(n == "" for n in names):
        return None
    if len(parts) == 2 and parts[0] == "users":
        return ((USER, names[0]),)
    if len(parts) == 2 and parts[0] == "clients":
        return ((CLIENT_ID, names[0]),)
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "clients":
        return ((CLIENT_ID, names[1]), (USER, names[0]))
    return None


def quota_keys_of(config: Mapping[str, str]) -> dict[str, str]:
    """The quota keys of an entity config (a user's SCRAM credentials left out)."""
    return {k: v for k, v in config.items() if k in QUOTA_KEYS}
