"""Client quotas for ``AdminClient`` (KIP-546): DescribeClientQuotas (48) and AlterClientQuotas (49), v0-1,
sent to any broker (Kafka's ZooKeeper-mode brokers all serve both), as Kafka's ``Admin.describeClientQuotas``
and ``alterClientQuotas``.

An entity is a set of ``(entity type, name)`` pairs, the types ``user``, ``client-id`` (and ``ip``), a None
name being the ``<default>`` entity; quota keys are Kafka's (``producer_byte_rate``, ``consumer_byte_rate``,
``request_percentage``, ``controller_mutation_rate``) with float values. Per-entity failures of an alteration
raise one ``AdminOperationError`` keyed by ``ClientQuotaEntity``; a describe's top-level error raises. Pure
functions over a send callable; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive, fixed
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.protocol import API_BY_KEY, ApiKey

__all__ = [
    "USER",
    "CLIENT_ID",
    "IP",
    "ClientQuotaEntity",
    "ClientQuotaFilterComponent",
    "ClientQuotaAlteration",
    "QuotaOp",
    "describe_client_quotas",
    "describe_client_quotas_steps",
    "alter_client_quotas",
    "alter_client_quotas_steps",
]

DESCRIBE = int(ApiKey.DESCRIBE_CLIENT_QUOTAS)
ALTER = int(ApiKey.ALTER_CLIENT_QUOTAS)
USER, CLIENT_ID, IP = "user", "client-id", "ip"
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


@dataclass(frozen=True)
class ClientQuotaEntity:
    """A quota entity (Kafka's ``ClientQuotaEntity``): ``entries`` are ``(entity type, name or None for
    <default>)`` pairs sorted by type. ``ClientQuotaEntity.of(user="alice", client_id=None)`` names types by
    keyword (a keyword given as None is the default entity of that type; one left out is not part of it)."""

    entries: tuple[tuple[str, str | None], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(sorted(self.entries, key=lambda e: e[0])))

    @classmethod
    def of(cls, **names: str | None) -> ClientQuotaEntity:
        """``of(user="alice")``, ``of(client_id=None)``, ``of(user="a", client_id="c")`` (``client_id`` is the
        ``client-id`` type)."""
        return cls(tuple((t.replace("_", "-"), n) for t, n in names.items()))

    @classmethod
    def from_mapping(cls, entries: Mapping[str, str | None]) -> ClientQuotaEntity:
        """From ``{"user": "alice", "client-id": None}``."""
        return cls(tuple(entries.items()))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.entries)

    def __str__(self) -> str:
        return ", ".join(f"{t}={'<default>' if n is None else n}" for t, n in self.entries)


@dataclass(frozen=True)
class ClientQuotaFilterComponent:
    """One component of a describe filter (Kafka's ``ClientQuotaFilterComponent``): use ``of_entity`` (the
    named entity), ``of_default_entity`` (the ``<default>`` one) or ``of_entity_type`` (any of the type)."""

    entity_type: str
    match_type: int
    match: str | None = None

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_EXACT, name)

    @classmethod
    def of_default_entity(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_DEFAULT)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_SPECIFIED)


@dataclass(frozen=True)
class QuotaOp:
    """Set ``key`` to ``value``, or remove it when ``value`` is None (Kafka's ``ClientQuotaAlteration.Op``)."""

    key: str
    value: float | None


@dataclass(frozen=True)
class ClientQuotaAlteration:
    """The ops on one entity's quotas."""

    entity: ClientQuotaEntity
    ops: tuple[QuotaOp, ...]


def describe_client_quotas(
    send: Callable[..., tuple[int, Any, Any]], components: Iterable[ClientQuotaFilterComponent], strict: bool
) -> dict[ClientQuotaEntity, dict[str, float]]:
    """``describe_client_quotas_steps`` driven by the blocking ``send`` (any broker)."""
    return drive(describe_client_quotas_steps(components, strict), send)


def describe_client_quotas_steps(
    components: Iterable[ClientQuotaFilterComponent], strict: bool
) -> AdminSteps[dict[ClientQuotaEntity, dict[str, float]]]:
    """``{entity: {key: value}}`` of the entities the filter selects; a top-level error raises
    ``KafkaClientError`` with the broker's code and message."""
    R = API_BY_KEY[DESCRIBE].Request
    body = R(
        components=[
            R.ComponentData(entity_type=c.entity_type, match_type=c.match_type, match=c.match) for c in components
        ],
        strict=strict,
    )
    _, response, peer = yield AdminRequest(DESCRIBE, fixed(body), "DescribeClientQuotas")
    if response.error_code:
        raise error_for_code(
            response.error_code, "DescribeClientQuotas", broker=peer or "any broker", detail=response.error_message
        )
    return {
        ClientQuotaEntity(tuple((e.entity_type, e.entity_name) for e in entry.entity)): {
            v.key: v.value for v in entry.values
        }
        for entry in response.entries or ()
    }


def alter_client_quotas(
    send: Callable[..., tuple[int, Any, Any]], alterations: Iterable[ClientQuotaAlteration], validate_only: bool
) -> dict[ClientQuotaEntity, KafkaClientError]:
    """``alter_client_quotas_steps`` driven by the blocking ``send`` (any broker)."""
    return drive(alter_client_quotas_steps(alterations, validate_only), send)


def alter_client_quotas_steps(
    alterations: Iterable[ClientQuotaAlteration], validate_only: bool
) -> AdminSteps[dict[ClientQuotaEntity, KafkaClientError]]:
    """Send one AlterClientQuotas; the entities that failed, with their errors."""
    R = API_BY_KEY[ALTER].Request
    body = R(
        entries=[
            R.EntryData(
                entity=[R.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in a.entity.entries],
                ops=[
                    R.EntryData.OpData(
                        key=op.key, value=0.0 if op.value is None else float(op.value), remove=op.value is None
                    )
                    for op in a.ops
                ],
            )
            for a in alterations
        ],
        validate_only=validate_only,
    )
    _, response, peer = yield AdminRequest(ALTER, fixed(body), "AlterClientQuotas")
    errors = {}
    for entry in response.entries:
        if entry.error_code:
            entity = ClientQuotaEntity(tuple((e.entity_type, e.entity_name) for e in entry.entity))
            errors[entity] = error_for_code(
                entry.error_code,
                f"AlterClientQuotas of {entity}",
                broker=peer or "any broker",
                detail=entry.error_message,
            )
    return errors
