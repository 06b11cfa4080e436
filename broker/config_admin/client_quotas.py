"""Client quota administration as Kafka's ZooKeeper-mode brokers do it (``ZkAdminManager.describeClientQuotas``
and ``alterClientQuotas``): which stored entities a DescribeClientQuotas filter selects, and what an
AlterClientQuotas entry writes. Pure (no I/O): the handlers read and write the registry.

Filters: one component per entity type (``user``, ``client-id``; ``ip`` alone selects nothing, since kafkalog
stores no ip quotas; ``ip`` with another type is refused), match type 0 (``EXACT``, the name given), 1
(``DEFAULT``, the ``<default>`` entity) or 2 (``SPECIFIED``, any entity of the type, ``<default>`` included);
``strict`` leaves out entities with a type the filter does not name. Only the quota keys (``QUOTA_KEYS``) are
described; an entity without any is left out.

Alterations: the entity must be a user, a client-id or both (Kafka's ``parseAndSanitizeQuotaEntity``); each op
sets or removes one key; ``producer_byte_rate`` and ``consumer_byte_rate`` are Kafka LONG configs and must be
whole numbers (within 1e-6, stored as integers: ``1024``), ``request_percentage`` and
``controller_mutation_rate`` DOUBLE configs (stored as Java's ``Double.toString`` would: ``50.0``). kafkalog
also refuses a value that is not positive (a quota of zero or less would throttle every request forever).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from broker.cluster.quota_entities import CLIENT_ID, IP, QUOTA_KEYS, USER, QuotaEntity, quota_keys_of
from spark_kafkalog.protocol import ErrorCode

__all__ = [
    "MATCH_EXACT",
    "MATCH_DEFAULT",
    "MATCH_SPECIFIED",
    "ClientQuotaError",
    "FilterComponent",
    "select_entities",
    "alteration_entity",
    "alteration_updates",
    "format_value",
]

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
_LONG_KEYS = frozenset({"producer_byte_rate", "consumer_byte_rate"})
_EPSILON = 1e-6


class ClientQuotaError(Exception):
    """A refused filter or alteration: ``code`` is the Kafka error code the response carries, ``message`` says
    what was wrong."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class FilterComponent:
    """One DescribeClientQuotas filter component (``match`` is only read for ``MATCH_EXACT``)."""

    entity_type: str
    match_type: int
    match: str | None = None


def _invalid(message: str) -> ClientQuotaError:
    return ClientQuotaError(ErrorCode.INVALID_REQUEST, message)


def _check_filter(components: Sequence[FilterComponent]) -> dict[str, FilterComponent]:
    by_type: dict[str, FilterComponent] = {}
    for c in components:
        if c.entity_type == "":
            raise _invalid("Unexpected empty filter component entity type")
        if c.entity_type not in (USER, CLIENT_ID, IP):
            raise ClientQuotaError(ErrorCode.UNSUPPORTED_VERSION, f"Custom entity type '{c.entity_type}' not supported")
        if c.entity_type in by_type:
            raise _invalid(f"Duplicate {c.entity_type} filter component entity type")
        if c.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
            raise _invalid(f"Unexpected match type {c.match_type} of the {c.entity_type} filter component")
        if c.match_type == MATCH_EXACT and c.match is None:
            raise _invalid(f"Unexpected null match for the exact match type of the {c.entity_type} filter component")
        by_type[c.entity_type] = c
    if IP in by_type and len(by_type) > 1:
        raise _invalid(
            "Invalid entity filter component combination, IP filter component should not be used with user or "
            "clientId filter component."
        )
    return by_type


def _component_matches(component: FilterComponent, name: str | None) -> bool:
    if component.match_type == MATCH_EXACT:
        return name == component.match
    if component.match_type == MATCH_DEFAULT:
        return name is None
    return True


def select_entities(
    configs: Mapping[QuotaEntity, Mapping[str, str]], components: Sequence[FilterComponent], strict: bool
) -> dict[QuotaEntity, dict[str, float]]:
    """The entities of ``configs`` (every stored entity with its whole config) the filter selects, each with its
    quota values as doubles; ClientQuotaError for a filter Kafka refuses (INVALID_REQUEST; UNSUPPORTED_VERSION
    for an unknown entity type). A stored value that is not a number is left out of the answer."""
    by_type = _check_filter(components)
    if IP in by_type:
        return {}
    out: dict[QuotaEntity, dict[str, float]] = {}
    for entity, config in configs.items():
        names = dict(entity)
        if any(t not in names for t in by_type):
            continue
        if strict and any(t not in by_type for t in names):
            continue
        if not all(_component_matches(by_type[t], names[t]) for t in by_type):
            continue
        values = {}
        for key, text in quota_keys_of(config).items():
            try:
                values[key] = float(text)
            except ValueError:
                continue
        if values:
            out[entity] = values
    return out


def alteration_entity(pairs: Iterable[tuple[str, str | None]]) -> QuotaEntity:
    """The entity an AlterClientQuotas entry names (sorted pairs); ClientQuotaError (INVALID_REQUEST) as Kafka
    refuses it: no component, an empty name, an unknown or repeated type, ``ip`` with another type, or ``ip``
    at all (kafkalog keeps no connection-rate quotas)."""
    pairs = list(pairs)
    if not pairs:
        raise _invalid("Invalid empty client quota entity")
    types = [t for t, _ in pairs]
    for entity_type, name in pairs:
        if entity_type not in (USER, CLIENT_ID, IP):
            raise _invalid(f"Unhandled client quota entity type: {entity_type}")
        if name is not None and name == "":
            raise _invalid(f"Empty {entity_type} not supported")
    if len(set(types)) != len(types):
        raise _invalid(f"Duplicate entity type in client quota entity {sorted(types)}")
    if IP in types:
        if len(types) > 1:
            raise _invalid(
                "Invalid quota entity combination, IP entity should not be combined with User/ClientId entity."
            )
        raise _invalid("kafkalog does not support ip quota entities (connection_creation_rate)")
    return tuple(sorted(pairs, key=lambda p: p[0]))


def format_value(key: str, value: float) -> str:
    """The stored text of a quota value, as Kafka stores it: a LONG key as an integer (``1024``), a DOUBLE key
    as Java's ``Double.toString`` for ordinary magnitudes (``50.0``, ``0.5``)."""
    if key in _LONG_KEYS:
        return str(int(value + _EPSILON))
    return repr(float(value))


def alteration_updates(ops: Iterable[tuple[str, float, bool]]) -> dict[str, str | None]:
    """The registry updates of an entry's ``(key, value, remove)`` ops, in order (a later op on a key wins);
    ClientQuotaError (INVALID_REQUEST) for an unknown key, a LONG key with a fractional value, or a value that
    is not a finite positive number."""
    updates: dict[str, str | None] = {}
    for key, value, remove in ops:
        if remove:
            updates[key] = None
            continue
        if key not in QUOTA_KEYS:
            raise _invalid(f"Invalid configuration key {key}")
        if not math.isfinite(value) or value <= 0:
            raise _invalid(f"Configuration {key} must be a positive number, not {value!r}")
        if key in _LONG_KEYS and abs(int(value + _EPSILON) - value) > _EPSILON:
            raise _invalid(f"Configuration {key} must be a Long value")
        updates[key] = format_value(key, value)
    return updates
