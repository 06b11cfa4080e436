"""CreateAcls (key 30), v0-3 (flexible v2+; v1 adds the resource pattern type, absent in v0 and so LITERAL; v3
the USER resource type; `kafka-acls --add`, AdminClient.createAcls): served by every broker, as in Kafka's
ZooKeeper mode where each broker writes ZooKeeper itself. The bindings of one resource pattern are added in
one compare-and-set read-modify-write of its node (`/kafka-acl/<Type>/<name>`,
`/kafka-acl-extended/prefixed/<Type>/<prefix>`) with a change notice for the other brokers, and go into this
broker's ACL cache at once. One result per creation, in request order.
Per creation (Kafka's AclApis and AclAuthorizer.createAcls), INVALID_REQUEST for: a CLUSTER resource not named
`kafka-cluster`; an empty name; a code this version does not know; a name containing `/`; a principal that is
not `Type:name` (kafkalog: Kafka's ZooKeeper mode fails the resource's whole group with UNKNOWN_SERVER_ERROR);
the others are still created. For the whole request: a creation holding code 0 (UNKNOWN) is malformed, as
Kafka parses it (connection closed, nothing created); resource type ANY, pattern type ANY or MATCH, operation
ANY or permission ANY cannot form a binding: every creation gets UNKNOWN_SERVER_ERROR and nothing is created
(as Kafka). Every creation gets CLUSTER_AUTHORIZATION_FAILED without Alter on the cluster, SECURITY_DISABLED
when no authorizer is configured; UNKNOWN_SERVER_ERROR for the creations of a resource whose write failed.
"""

from __future__ import annotations

import logging

from broker.api import CloseConnection
from broker.cluster.registry import RegistryError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import (
    CLUSTER_NAME,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

from ._acls import NO_AUTHORIZER, cluster_denied, has_unknown_code

API_KEY = ApiKey.CREATE_ACLS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]
_log = logging.getLogger("kafkalog.handlers.acls")

_CODE_FIELDS = ("resource_type", "resource_pattern_type", "operation", "permission_type")


def _binding(c) -> AclBinding:
    """The binding of one creation; ValueError naming the field for what cannot be in a binding (Kafka's
    ResourcePattern and AccessControlEntry constructors)."""
    resource_type = ResourceType.from_code(c.resource_type)
    pattern_type = PatternType.from_code(c.resource_pattern_type)
    operation = AclOperation.from_code(c.operation)
    permission = AclPermissionType.from_code(c.permission_type)
    if resource_type is ResourceType.ANY:
        raise ValueError("resourceType must not be ANY")
    if pattern_type in (PatternType.ANY, PatternType.MATCH):
        raise ValueError(f"patternType must not be {pattern_type.name}")
    if operation is AclOperation.ANY:
        raise ValueError("operation must not be ANY")
    if permission is AclPermissionType.ANY:
        raise ValueError("permissionType must not be ANY")
    return AclBinding(
        ResourcePattern(resource_type, c.resource_name, pattern_type),
        AccessControlEntry(c.principal, c.host, operation, permission),
    )


def _invalid(binding: AclBinding) -> str | None:
    """Why ``binding`` is refused (INVALID_REQUEST), or None."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not pattern.name:
        return "Invalid empty resource name"
    unknown = [
        name
        for name, value in (
            ("resource type", pattern.resource_type),
            ("pattern type", pattern.pattern_type),
            ("operation", entry.operation),
            ("permission type", entry.permission_type),
        )
        if value == 0
    ]
    if unknown:
        return f"Failed to create ACL: ACL binding contains unknown elements ({', '.join(unknown)})"
    if "/" in pattern.name:
        return f"Failed to create ACL: ACL binding contains invalid resource name: {pattern.name}"
    if ":" not in entry.principal:
        return f"Failed to create ACL: principal {entry.principal!r} is not Type:name (e.g. User:alice)"
    return None


async def handle(ctx, request):
    R = _API.Response
    creations = request.creations

    def everyone(code: int, message: str):
        return R(
            throttle_time_ms=0,
            results=[R.AclCreationResult(error_code=code, error_message=message) for _ in creations],
        )

    unknown = has_unknown_code(creations, *_CODE_FIELDS)
    if unknown is not None:
        return CloseConnection(f"CreateAcls creation has {unknown} 0 (UNKNOWN): malformed, as Kafka parses it")
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return everyone(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, cluster_denied(ctx.principal, AclOperation.ALTER))
    services = ctx.services
    authorizer = services.authorizer
    if not authorizer.enabled:
        return everyone(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    try:
        bindings = [_binding(c) for c in creations]
    except ValueError as exc:
        return everyone(ErrorCode.UNKNOWN_SERVER_ERROR, f"Not an ACL binding: {exc}")
    results: list[tuple[int, str | None]] = [(ErrorCode.NONE, None)] * len(bindings)
    by_pattern: dict[ResourcePattern, list[int]] = {}
    for i, binding in enumerate(bindings):
        problem = _invalid(binding)
        if problem is None:
            by_pattern.setdefault(binding.pattern, []).append(i)
        else:
            results[i] = (ErrorCode.INVALID_REQUEST, problem)
    registry = services.registry
    for pattern, indexes in by_pattern.items():
        added = frozenset(bindings[i].entry for i in indexes)

        def write(pattern=pattern, added=added):
            return registry.update_resource_acls(pattern, lambda current: current | added)

        try:
            await services.run_blocking(authorizer.write_resource, pattern, write)
        except (RegistryError, ValueError) as exc:
            _log.warning("CreateAcls: could not add ACLs to %s: %s", pattern, exc)
            for i in indexes:
                results[i] = (ErrorCode.UNKNOWN_SERVER_ERROR, f"Could not add the ACLs of {pattern}: {exc}")
    return R(
        throttle_time_ms=0,
        results=[R.AclCreationResult(error_code=code, error_message=message) for code, message in results],
    )
