"""Kafka's ACL vocabulary, shared by the broker's authorizer, its ACL APIs and storage, the admin client and
the CLI: resource types, pattern types, operations and permission types with their wire codes, and the
bindings and filters built from them (``org.apache.kafka.common.acl`` / ``.resource`` semantics).

Wire codes (int8 in CreateAcls, DescribeAcls and DeleteAcls)::

    ResourceType   UNKNOWN 0, ANY 1, TOPIC 2, GROUP 3, CLUSTER 4, TRANSACTIONAL_ID 5, DELEGATION_TOKEN 6, USER 7
    PatternType    UNKNOWN 0, ANY 1, MATCH 2, LITERAL 3, PREFIXED 4
    AclOperation   UNKNOWN 0, ANY 1, ALL 2, READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
                   CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12,
                   CREATE_TOKENS 13, DESCRIBE_TOKENS 14
    AclPermissionType  UNKNOWN 0, ANY 1, DENY 2, ALLOW 3

Names: ``.name`` is the enum constant (``DESCRIBE_CONFIGS``: change notices, kafka-acls' output), ``.kafka_name``
the PascalCase form Kafka writes in ZooKeeper's ACL JSON and in its ``/kafka-acl/<Type>`` paths
(``DescribeConfigs``, ``TransactionalId``); ``parse`` accepts either spelling, any case, and ``_``/``-``-less
forms (``describeconfigs``), as Kafka's ``fromString`` and kafka-acls do.

Immutable values; safe to share between threads.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "CLUSTER_NAME",
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "implied_operations",
    "supported_operations",
]

WILDCARD_RESOURCE = "*"
"""A LITERAL resource name that matches every resource of its type."""
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
CLUSTER_NAME = "kafka-cluster"
"""The only name a CLUSTER resource has."""


def _squash(text: str) -> str:
    return text.replace("_", "").replace("-", "").lower()


class _KafkaEnum(enum.IntEnum):
    @property
    def kafka_name(self) -> str:
        """PascalCase, as Kafka's ZooKeeper JSON and paths spell it (``DescribeConfigs``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def parse(cls, text: str):
        """The member named ``text`` in any of Kafka's spellings; ValueError naming the choices otherwise."""
        wanted = _squash(text.strip())
        for member in cls:
            if _squash(member.name) == wanted:
                return member
        choices = ", ".join(m.name for m in cls if m.name not in ("UNKNOWN",))
        raise ValueError(f"unknown {cls.__name__} {text!r} (one of {choices})")

    @classmethod
    def from_code(cls, code: int):
        """The member with wire code ``code``; UNKNOWN for a code this version does not know (as Kafka does)."""
        try:
            return cls(code)
        except ValueError:
            return cls(0)


class ResourceType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4

    @property
    def is_specific(self) -> bool:
        """LITERAL or PREFIXED: a pattern a binding can have (ANY and MATCH exist only in filters)."""
        return self in (PatternType.LITERAL, PatternType.PREFIXED)


class AclOperation(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(_KafkaEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_O = AclOperation
_SUPPORTED: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset(
        {_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS}
    ),
    ResourceType.GROUP: frozenset({_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset(
        {
            _O.CREATE,
            _O.CLUSTER_ACTION,
            _O.DESCRIBE_CONFIGS,
            _O.ALTER_CONFIGS,
            _O.IDEMPOTENT_WRITE,
            _O.ALTER,
            _O.DESCRIBE,
        }
    ),
    ResourceType.TRANSACTIONAL_ID: frozenset({_O.DESCRIBE, _O.WRITE}),
    ResourceType.DELEGATION_TOKEN: frozenset({_O.DESCRIBE}),
    ResourceType.USER: frozenset({_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS}),
}


def supported_operations(resource_type: ResourceType) -> frozenset[AclOperation]:
    """The operations that mean something on ``resource_type`` (Kafka's ``AclEntry.supportedOperations``): the
    bits of an authorized-operations field. Empty for ANY and UNKNOWN."""
    return _SUPPORTED.get(resource_type, frozenset())


def implied_operations(operation: AclOperation) -> frozenset[AclOperation]:
    """The operations whose ALLOW grants ``operation`` (ALL aside): DESCRIBE is granted by READ, WRITE, DELETE
    and ALTER too, DESCRIBE_CONFIGS by ALTER_CONFIGS; any other operation only by itself. DENY implies nothing."""
    if operation is AclOperation.DESCRIBE:
        return frozenset({_O.DESCRIBE, _O.READ, _O.WRITE, _O.DELETE, _O.ALTER})
    if operation is AclOperation.DESCRIBE_CONFIGS:
        return frozenset({_O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS})
    return frozenset({operation})


@dataclass(frozen=True, order=True)
class ResourcePattern:
    """A resource type, a name and how the name matches (LITERAL, ``*`` included, or PREFIXED)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
            f"patternType={self.pattern_type.name})"
        )

    def matches_resource(self, resource_type: ResourceType, name: str) -> bool:
        """Whether an ACL on this pattern applies to the literal resource ``(resource_type, name)``."""
        if resource_type is not self.resource_type:
            return False
        if self.pattern_type is PatternType.PREFIXED:
            return name.startswith(self.name)
        return self.name in (name, WILDCARD_RESOURCE)


@dataclass(frozen=True, order=True)
class AccessControlEntry:
    """Who (``User:alice``, ``User:*``), from where (an IP or ``*``), what operation, allowed or denied."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission_type.name})"
        )


@dataclass(frozen=True, order=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True)
class ResourcePatternFilter:
    """Matches resource patterns (``ResourcePatternFilter.matches``): type ANY matches every type; name None
    every name; pattern type ANY the exact name under any pattern type; MATCH the patterns that would apply to
    the literal resource ``name`` (the literal name, the literal ``*``, and every prefix of it); LITERAL or
    PREFIXED exactly that pattern."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type is not ResourceType.ANY and self.resource_type is not pattern.resource_type:
            return False
        if self.pattern_type is PatternType.MATCH:
            if self.name is None:
                return True
            return pattern.matches_resource(pattern.resource_type, self.name)
        if self.pattern_type is not PatternType.ANY and self.pattern_type is not pattern.pattern_type:
            return False
        return self.name is None or self.name == pattern.name

    def unknown_field(self) -> str | None:
        """The name of a field that holds UNKNOWN (such a filter matches nothing), or None."""
        if self.resource_type is ResourceType.UNKNOWN:
            return "resource type"
        if self.pattern_type is PatternType.UNKNOWN:
            return "pattern type"
        return None


@dataclass(frozen=True)
class AccessControlEntryFilter:
    """Matches entries: None principal or host, and ANY operation or permission type, match every value."""

    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches(self, entry: AccessControlEntry) -> bool:
        return (
            (self.principal is None or self.principal == entry.principal)
            and (self.host is None or self.host == entry.host)
            and (self.operation is AclOperation.ANY or self.operation is entry.operation)
            and (self.permission_type is AclPermissionType.ANY or self.permission_type is entry.permission_type)
        )

    def unknown_field(self) -> str | None:
        if self.operation is AclOperation.UNKNOWN:
            return "operation"
        if self.permission_type is AclPermissionType.UNKNOWN:
            return "permission type"
        return None


@dataclass(frozen=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter = ResourcePatternFilter()
    entry: AccessControlEntryFilter = AccessControlEntryFilter()

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)

    def unknown_field(self) -> str | None:
        """The name of a field holding UNKNOWN, or None (Kafka refuses such filters)."""
        return self.pattern.unknown_field() or self.entry.unknown_field()
