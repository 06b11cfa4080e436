"""Quota entities, Kafka's precedence among them, and the quota types with their config keys.

An entity is a sorted tuple of ``(entity type, name)`` pairs, types ``"client-id"`` and ``"user"`` as in
DescribeClientQuotas, a name of None being ``<default>``: ``(("user", "alice"),)``,
``(("client-id", None), ("user", "alice"))`` (``users/alice/clients/<default>``). Names are as users and
clients spell them (not URL-encoded); the quota user of principal ``User:alice`` is ``alice``.

``resolve`` is Kafka's ``DefaultQuotaCallback``: for a (user, client id) it finds the most specific entity
configured, in this order::

    users/<u>/clients/<c>  users/<u>/clients/<default>  users/<u>
    users/<default>/clients/<c>  users/<default>/clients/<default>  users/<default>
    clients/<c>  clients/<default>

and the *sensor key*, Kafka's metric tags ``(user, client-id)``, "" for a part the entity does not name: every
client of one key shares one rate. ``users/alice`` gives ``("alice", "")`` (all of alice's clients share it);
``users/alice/clients/<default>`` gives ``("alice", c)`` (each of alice's client ids has its own); the default
entities give a key per user or client id as well (a default quota applies to each one separately).
Pure functions; thread-safe.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from ..cluster.quota_entities import CLIENT_ID, USER, QuotaEntity, check_quota_entity, parse_quota_entity_path

__all__ = [
    "CLIENT_ID",
    "USER",
    "QuotaEntity",
    "QuotaType",
    "check_entity",
    "entity_of",
    "quota_user",
    "resolve",
]

_Key = tuple[str | None, str | None]  # (user, client id) of a configured entity; "" = the type is absent
_ABSENT = ""


class QuotaType(enum.Enum):
    """Kafka's client quota types: the metric group (``kafka.server:type=<name>``), the config key, and the
    name of the rate metric."""

    PRODUCE = ("Produce", "producer_byte_rate", "byte-rate")
    FETCH = ("Fetch", "consumer_byte_rate", "byte-rate")
    REQUEST = ("Request", "request_percentage", "request-time")

    def __init__(self, group: str, config_key: str, rate_metric: str) -> None:
        self.group = group
        self.config_key = config_key
        self.rate_metric = rate_metric


check_entity = check_quota_entity
"""``entity`` sorted, or ValueError naming what is wrong (the registry's own check)."""


def entity_of(path: str) -> QuotaEntity:
    """The entity of Kafka's entity path: ``users/alice``, ``clients/<default>``, ``users/alice/clients/app``
    (names sanitized as in ZooKeeper; plain names are their own sanitized form)."""
    entity = parse_quota_entity_path(path.strip("/"))
    if entity is None:
        raise ValueError(f"quota entity path {path!r}: expected users/<u>, clients/<c> or users/<u>/clients/<c>")
    return entity


def quota_user(principal: str) -> str:
    """The quota user of a principal: its name without the type (``User:alice`` -> ``alice``)."""
    return principal.split(":", 1)[1] if ":" in principal else principal


def _key(entity: QuotaEntity) -> _Key:
    d = dict(entity)
    return (d[USER] if USER in d else _ABSENT, d[CLIENT_ID] if CLIENT_ID in d else _ABSENT)


def keyed(quotas: Mapping[QuotaEntity, float]) -> dict[_Key, float]:
    """Bounds by (user, client id) key, None for ``<default>`` and "" for an absent type (``resolve``'s input)."""
    return {_key(e): bound for e, bound in quotas.items()}


def resolve(bounds: Mapping[_Key, float], user: str, client_id: str) -> tuple[tuple[str, str], float | None]:
    """The sensor key ``(user, client id)`` and the bound for this user and client id (None: no quota).

    ``bounds`` as ``keyed`` returns them. Kafka's ``quotaMetricTags`` then ``quotaLimit``.
    """
    u, c, d = user, client_id, None
    if (u, c) in bounds or (u, d) in bounds:
        tags = (u, c)
    elif (u, _ABSENT) in bounds:
        tags = (u, _ABSENT)
    elif (d, c) in bounds or (d, d) in bounds:
        tags = (u, c)
    elif (d, _ABSENT) in bounds:
        tags = (u, _ABSENT)
    else:
        tags = (_ABSENT, c)
    return tags, limit(bounds, *tags)


def limit(bounds: Mapping[_Key, float], user: str, client_id: str) -> float | None:
    """The bound of a sensor key (Kafka's ``quotaLimit``), None when no entity applies."""
    d = None
    if user and client_id:
        candidates: tuple[_Key, ...] = ((user, client_id), (user, d), (d, client_id), (d, d))
    elif user:
        candidates = ((user, _ABSENT), (d, _ABSENT))
    elif client_id:
        candidates = ((_ABSENT, client_id), (_ABSENT, d))
    else:
        return None
    for key in candidates:
        bound = bounds.get(key)
        if bound is not None:
            return bound
    return None
