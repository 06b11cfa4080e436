"""What DescribeAcls, CreateAcls and DeleteAcls share: the wire's int8 codes read as Kafka's request classes
read them, and the messages of the errors all three answer.

Codes: a field holding 0 (UNKNOWN) is refused at parse by Kafka (``CreateAclsRequest.validate``,
``DescribeAclsRequest``/``DeleteAclsRequest.normalizeAndValidate`` throw, and the broker closes the
connection); ``has_unknown_code`` finds them. Any other code this version does not know reads as UNKNOWN
(``from_code``), which a filter never matches and a creation is refused for.
"""

from __future__ import annotations

from collections.abc import Iterable

from spark_kafkalog.security.acl import (
    CLUSTER_NAME,
    AccessControlEntryFilter,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePatternFilter,
    ResourceType,
)

NO_AUTHORIZER = "No Authorizer is configured."
"""SECURITY_DISABLED's message in CreateAcls and DeleteAcls (DescribeAcls says "... on the broker")."""


def cluster_denied(principal: str, operation: AclOperation) -> str:
    """CLUSTER_AUTHORIZATION_FAILED's message: who lacked which operation on the cluster."""
    return (
        f"Cluster authorization failed: {principal} is not allowed {operation.kafka_name} on "
        f"Cluster:LITERAL:{CLUSTER_NAME}"
    )


def has_unknown_code(items: Iterable[object], *fields: str) -> str | None:
    """The first of ``fields`` holding code 0 (UNKNOWN) in any of ``items``, or None."""
    for item in items:
        for name in fields:
            if getattr(item, name) == 0:
                return name
    return None


def binding_filter(f) -> AclBindingFilter:
    """The filter of a DescribeAcls request or a DeleteAcls filter (same field names). v0 has no pattern type
    field: it reads as LITERAL, so a v0 filter never matches a PREFIXED ACL."""
    return AclBindingFilter(
        ResourcePatternFilter(
            ResourceType.from_code(f.resource_type_filter),
            f.resource_name_filter,
            PatternType.from_code(f.pattern_type_filter),
        ),
        AccessControlEntryFilter(
            f.principal_filter,
            f.host_filter,
            AclOperation.from_code(f.operation),
            AclPermissionType.from_code(f.permission_type),
        ),
    )


FILTER_CODE_FIELDS = ("resource_type_filter", "pattern_type_filter", "operation", "permission_type")
"""The int8 code fields of a DescribeAcls request and of a DeleteAcls filter."""
