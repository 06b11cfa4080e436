"""The broker's authorizer: Kafka's ``AclAuthorizer`` semantics over an in-memory ACL cache.

Decisions (``authorize``), for a principal (``User:alice``), the client's IP address, an operation and a
LITERAL resource (type, name) -- the only kind a broker ever asks about:

1. a principal listed in ``super.users`` is allowed everything;
2. the candidate ACLs are those on the literal name, on the literal ``*`` of the same resource type, and on
   every PREFIXED pattern of the same resource type that is a prefix of the name;
3. no candidate ACL at all (for anyone): ``allow.everyone.if.no.acl.found`` decides (default deny);
4. a candidate DENY whose principal is the caller or ``User:*``, whose host is the caller's or ``*`` and whose
   operation is the one asked or ALL denies (DENY implies nothing: DENY Read does not deny Describe);
5. otherwise a candidate ALLOW matching the same way with an operation in ``implied_operations(op)`` or ALL
   allows (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS); else deny.

``authorize_by_resource_type`` is KIP-679's question (may the principal do ``op`` on *some* resource of the
type; InitProducerId of an idempotent producer without IdempotentWrite on the cluster), answered as Kafka's
AclAuthorizer does: super user -> allow; a DENY on the literal ``*`` -> deny; ``allow.everyone.if.no.acl.found``
-> allow; else allow iff some ALLOW (literal or prefixed, any name) is not dominated by a DENY on the same
literal name or on a prefix of its name. Here operations match exactly or through ALL, without implication.

``authorized_operations`` is the bitfield of Metadata v8+, DescribeGroups v3+ and DescribeCluster: bit
``1 << op.code`` for each of the resource type's supported operations that ``authorize`` allows (all of them
without an authorizer). Those checks are not logged above DEBUG (Kafka logs them at TRACE).

Hosts compare as IP addresses, so an ACL for ``::1`` matches a client at ``0:0:0:0:0:0:0:1`` (the form Java
renders and ``kafka-acls`` stores) and an IPv4-mapped IPv6 peer matches the IPv4 ACL; any other host text
compares as a string. Principals compare as exact strings.

Denials are logged at INFO, allows at DEBUG, on logger ``kafkalog.authorizer`` in Kafka's authorizer-log form:
``Principal = User:bob is Denied Operation = Read from host = 127.0.0.1 on resource = Topic:LITERAL:t``.

Disabled (empty ``authorizer.class.name``) it allows everything and holds no ACLs: ``acls`` answers nothing
and the cache writes are ignored.

Concurrency: the request path (the event loop) reads, ACL sync (the registry's thread) and the ACL APIs write.
The cache is one immutable snapshot (the ACLs by pattern plus the indexes ``authorize`` uses: a dict per
literal name, a dict of prefixes per type probed by the prefix lengths present); readers take the current
snapshot without locking, writers build a new one under a lock and swap it in.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from broker.config_keys.schema import ConfigError
from spark_kafkalog.security.acl import (
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    implied_operations,
    supported_operations,
)

__all__ = ["ACL_AUTHORIZER_CLASS_NAMES", "AclAuthorizer", "normalize_host"]

ACL_AUTHORIZER_CLASS_NAMES = (
    "kafka.security.authorizer.AclAuthorizer",
    "kafka.security.auth.SimpleAclAuthorizer",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafkalog.AclAuthorizer",
)
"""The values of ``authorizer.class.name`` that enable this authorizer (Kafka's class names and kafkalog's)."""

_log = logging.getLogger("kafkalog.authorizer")

_ALLOW, _DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
_Key = tuple[str, str, AclOperation, AclPermissionType]
"""An entry as the index holds it: (principal, normalized host, operation, permission type)."""


@functools.lru_cache(maxsize=4096)
def normalize_host(host: str) -> str:
    """``host`` in the one form hosts compare in: an IP address compressed (``::1``; an IPv4-mapped IPv6
    address as its IPv4 address, as Java sees such a peer), anything else (``*``, a name) unchanged. Cached:
    a broker sees few distinct client addresses."""
    if host == WILDCARD_HOST:
        return host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


_DENYING = {op: (op, AclOperation.ALL) for op in AclOperation}
"""The ACL operations whose DENY denies an operation: itself and ALL (DENY implies nothing)."""
_ALLOWING = {op: tuple(implied_operations(op) | {AclOperation.ALL}) for op in AclOperation}
"""The ACL operations whose ALLOW allows an operation: those implying it and ALL."""


def _key(entry: AccessControlEntry) -> _Key:
    return (entry.principal, normalize_host(entry.host), entry.operation, entry.permission_type)


@dataclass(frozen=True)
class _PrefixIndex:
    """The PREFIXED patterns of one resource type: entry keys by prefix, and the prefix lengths present (so a
    name is matched by probing ``name[:n]`` for each length, not by scanning every prefix)."""

    by_prefix: Mapping[str, frozenset[_Key]]
    lengths: tuple[int, ...]

    def matching(self, name: str) -> Iterable[frozenset[_Key]]:
        for n in self.lengths:
            if n > len(name):
                break
            keys = self.by_prefix.get(name[:n])
            if keys is not None:
                yield keys


@dataclass(frozen=True)
class _Snapshot:
    """One immutable state of the cache (never mutated after it is built)."""

    acls: Mapping[ResourcePattern, frozenset[AccessControlEntry]]
    literal: Mapping[tuple[ResourceType, str], frozenset[_Key]]
    prefixed: Mapping[ResourceType, _PrefixIndex]
    by_type: Mapping[tuple[ResourceType, PatternType], tuple[tuple[str, frozenset[_Key]], ...]]

    @classmethod
    def build(cls, acls: Mapping[ResourcePattern, frozenset[AccessControlEntry]]) -> _Snapshot:
        literal: dict[tuple[ResourceType, str], frozenset[_Key]] = {}
        prefixes: dict[ResourceType, dict[str, frozenset[_Key]]] = {}
        by_type: dict[tuple[ResourceType, PatternType], list[tuple[str, frozenset[_Key]]]] = {}
        for pattern, entries in acls.items():
            keys = frozenset(_key(e) for e in entries)
            if pattern.pattern_type is PatternType.PREFIXED:
                prefixes.setdefault(pattern.resource_type, {})[pattern.name] = keys
            else:
                literal[(pattern.resource_type, pattern.name)] = keys
            by_type.setdefault((pattern.resource_type, pattern.pattern_type), []).append((pattern.name, keys))
        return cls(
            acls=acls,
            literal=literal,
            prefixed={
                t: _PrefixIndex(by_prefix, tuple(sorted({len(p) for p in by_prefix})))
                for t, by_prefix in prefixes.items()
            },
            by_type={k: tuple(v) for k, v in by_type.items()},
        )

    def candidates(self, resource_type: ResourceType, name: str) -> list[frozenset[_Key]]:
        """The entry keys of every pattern that applies to the literal resource (step 2 of the decision)."""
        found = []
        keys = self.literal.get((resource_type, name))
        if keys is not None:
            found.append(keys)
        if name != WILDCARD_RESOURCE:
            keys = self.literal.get((resource_type, WILDCARD_RESOURCE))
            if keys is not None:
                found.append(keys)
        index = self.prefixed.get(resource_type)
        if index is not None:
            found.extend(index.matching(name))
        return found

    def names(self, resource_type: ResourceType, pattern_type: PatternType, wanted: frozenset[_Key]) -> frozenset[str]:
        """The names of the patterns of this type and pattern type holding any of the ``wanted`` keys."""
        return frozenset(
            name for name, keys in self.by_type.get((resource_type, pattern_type), ()) if not keys.isdisjoint(wanted)
        )


_EMPTY = _Snapshot.build({})


def _parse_super_users(text: str) -> frozenset[str]:
    users = set()
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        if ":" not in item:
            raise ConfigError(
                f"super.users={text!r}: {item!r} is not a principal (expected Type:name, e.g. User:admin, "
                f"separated by ';')"
            )
        users.add(item)
    return frozenset(users)


class AclAuthorizer:
    """Decides (principal, client host, operation, resource) from the cached ACLs (see the module docstring).
    Thread-safe: any thread may read; writes (``replace_all``, ``update_resource``) swap in a new snapshot."""

    def __init__(
        self,
        *,
        enabled: bool = True,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.enabled = enabled
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._snapshot = _EMPTY
        self._write_lock = threading.Lock()
        self._api_write_lock = threading.Lock()

    def __repr__(self) -> str:
        state = "enabled" if self.enabled else "disabled"
        return f"AclAuthorizer({state}, {len(self._snapshot.acls)} resource patterns)"

    @classmethod
    def from_config(cls, config: Any) -> AclAuthorizer:
        """From ``authorizer.class.name`` (empty: disabled; one of ``ACL_AUTHORIZER_CLASS_NAMES``: enabled;
        anything else: ``ConfigError`` naming the key and the accepted values), ``super.users`` (``;``-separated
        ``Type:name``) and ``allow.everyone.if.no.acl.found``. ``config`` is a ``BrokerConfig`` (or any mapping
        of those keys to typed values)."""
        class_name = (config["authorizer.class.name"] or "").strip()
        if not class_name:
            return cls(enabled=False)
        if class_name not in ACL_AUTHORIZER_CLASS_NAMES:
            raise ConfigError(
                f"authorizer.class.name={class_name!r}: not an authorizer kafkalog has (empty for none, or one of "
                f"{', '.join(ACL_AUTHORIZER_CLASS_NAMES)})"
            )
        return cls(
            enabled=True,
            super_users=_parse_super_users(config["super.users"] or ""),
            allow_everyone_if_no_acl_found=bool(config["allow.everyone.if.no.acl.found"]),
        )

    # -- decisions ----------------------------------------------------------------------------------------

    def authorize(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        """Whether ``principal`` at ``host`` may do ``operation`` on the literal resource ``(resource_type,
        name)``; logged (denials at INFO)."""
        allowed = self._decide(principal, host, operation, resource_type, name)
        if _log.isEnabledFor(logging.DEBUG if allowed else logging.INFO):
            _log_decision(principal, host, operation, f"{resource_type.kafka_name}:LITERAL:{name}", allowed)
        return allowed

    def _decide(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        if not self.enabled or principal in self.super_users:
            return True
        candidates = self._snapshot.candidates(resource_type, name)
        if not candidates:
            return self.allow_everyone_if_no_acl_found
        principals = (principal, WILDCARD_PRINCIPAL)
        hosts = (normalize_host(host), WILDCARD_HOST)
        denying = _DENYING[operation]
        for keys in candidates:
            for p in principals:
                for h in hosts:
                    for op in denying:
                        if (p, h, op, _DENY) in keys:
                            return False
        allowing = _ALLOWING[operation]
        for keys in candidates:
            for p in principals:
                for h in hosts:
                    for op in allowing:
                        if (p, h, op, _ALLOW) in keys:
                            return True
        return False

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """KIP-679: whether some ACL lets ``principal`` at ``host`` do ``operation`` on some resource of
        ``resource_type`` (see the module docstring). ValueError for an ANY or UNKNOWN type or operation."""
        if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise ValueError(f"authorize_by_resource_type needs a resource type, not {resource_type.name}")
        if operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise ValueError(f"authorize_by_resource_type needs an operation, not {operation.name}")
        allowed = self._decide_by_type(principal, host, operation, resource_type)
        _log_decision(principal, host, operation, f"{resource_type.kafka_name}:ANY_NAME", allowed)
        return allowed

    def _decide_by_type(self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType) -> bool:
        if not self.enabled or principal in self.super_users:
            return True
        snapshot = self._snapshot
        h = normalize_host(host)

        def wanted(permission: AclPermissionType) -> frozenset[_Key]:
            return frozenset(
                (p, hh, op, permission)
                for p in (principal, WILDCARD_PRINCIPAL)
                for hh in (h, WILDCARD_HOST)
                for op in (operation, AclOperation.ALL)
            )

        deny, allow = wanted(_DENY), wanted(_ALLOW)
        deny_literals = snapshot.names(resource_type, PatternType.LITERAL, deny)
        if WILDCARD_RESOURCE in deny_literals:
            return False
        if self.allow_everyone_if_no_acl_found:
            return True
        deny_prefixes = snapshot.names(resource_type, PatternType.PREFIXED, deny)

        def dominated(name: str) -> bool:
            return any(name[:n] in deny_prefixes for n in range(1, len(name) + 1))

        if any(not dominated(p) for p in snapshot.names(resource_type, PatternType.PREFIXED, allow)):
            return True
        return any(
            literal == WILDCARD_RESOURCE or (literal not in deny_literals and not dominated(literal))
            for literal in snapshot.names(resource_type, PatternType.LITERAL, allow)
        )

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType, name: str) -> int:
        """Kafka's authorized-operations bitfield of the literal resource: bit ``1 << op`` for every operation
        of ``supported_operations(resource_type)`` that ``principal`` at ``host`` may do."""
        bits = 0
        for operation in supported_operations(resource_type):
            if self._decide(principal, host, operation, resource_type, name):
                bits |= 1 << operation
        return bits

    # -- the cache ----------------------------------------------------------------------------------------

    def acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """Every cached binding ``acl_filter`` matches (Kafka's filter semantics), sorted; none when disabled."""
        if not self.enabled:
            return []
        return sorted(
            AclBinding(pattern, entry)
            for pattern, entries in self._snapshot.acls.items()
            if acl_filter.pattern.matches(pattern)
            for entry in entries
            if acl_filter.entry.matches(entry)
        )

    def resource_acls(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        """The cached entries of exactly ``pattern`` (empty when none)."""
        return self._snapshot.acls.get(pattern, frozenset())

    def replace_all(self, acls: Mapping[ResourcePattern, Iterable[AccessControlEntry]]) -> None:
        """Replace the whole cache (the ACL sync's full load); patterns without entries are dropped."""
        if not self.enabled:
            return
        cleaned = {p: frozenset(e) for p, e in acls.items()}
        with self._write_lock:
            self._snapshot = _Snapshot.build({p: e for p, e in cleaned.items() if e})

    def update_resource(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        """Set the entries of one pattern (a change notice applied, or this broker's own write); no entries
        removes the pattern."""
        if not self.enabled:
            return
        new = frozenset(entries)
        with self._write_lock:
            acls = dict(self._snapshot.acls)
            if new:
                acls[pattern] = new
            elif acls.pop(pattern, None) is None:
                return
            self._snapshot = _Snapshot.build(acls)

    def write_resource(
        self, pattern: ResourcePattern, write: Callable[[], Iterable[AccessControlEntry]]
    ) -> frozenset[AccessControlEntry]:
        """Blocking (call it on a worker thread: ``run_blocking``): run ``write`` -- the registry's
        read-modify-write of ``pattern``, returning the entries stored now -- and put what it returns in the cache
        at once, so this broker sees its own ACL change before the change notice comes back. One such write at a
        time per authorizer (Kafka's authorizer holds its lock around ACL updates), so the cache never goes back
        to an older set of this broker's own writes. ``write``'s exception propagates; the cache is then left as
        it was. Returns the stored entries."""
        with self._api_write_lock:
            stored = frozenset(write())
            self.update_resource(pattern, stored)
            return stored

    def refresh_all(
        self, read_all: Callable[[], Mapping[ResourcePattern, Iterable[AccessControlEntry]]]
    ) -> Mapping[ResourcePattern, Iterable[AccessControlEntry]]:
        """Blocking, like ``write_resource``: read every ACL with ``read_all`` and replace the cache with them,
        under the same lock as this broker's own writes, so a write cannot land between the read and the
        replacement and be lost from the cache (Kafka's authorizer holds its lock over "read ZooKeeper, update
        the cache" too). Returns what was read. Re-reading one resource is ``write_resource(pattern, read)``."""
        with self._api_write_lock:
            acls = read_all()
            self.replace_all(acls)
            return acls


def _log_decision(principal: str, host: str, operation: AclOperation, resource: str, allowed: bool) -> None:
    """Kafka's authorizer-log line: denials at INFO, allows at DEBUG."""
    level = logging.DEBUG if allowed else logging.INFO
    if _log.isEnabledFor(level):
        _log.log(
            level,
            "Principal = %s is %s Operation = %s from host = %s on resource = %s",
            principal,
            "Allowed" if allowed else "Denied",
            operation.kafka_name,
            host,
            resource,
        )
