"""ACLs for ``AdminClient``: CreateAcls (30), DescribeAcls (29) and DeleteAcls (31), sent to any broker (each
broker writes ACLs to ZooKeeper itself, as Kafka's ZooKeeper-mode brokers do), v0-3, at the highest version both
sides support: v1 at least when a pattern type other than LITERAL (or ANY, for filters) is asked for (v0 knows
LITERAL names only), v3 for the USER resource type.

Errors, all ``KafkaClientError`` with the broker's ``error_code`` and its message: a top-level DescribeAcls
error (SECURITY_DISABLED when the broker has no authorizer, CLUSTER_AUTHORIZATION_FAILED without Describe on
the cluster) is raised; CreateAcls answers per binding (INVALID_REQUEST for an empty name, a cluster not named
``kafka-cluster`` ...) and DeleteAcls per filter and per matched ACL, which ``create_acls`` / ``delete_acls``
return keyed by binding or filter for the caller to raise together. A binding or filter holding UNKNOWN (or, in a
binding, ANY or MATCH) fails here with INVALID_REQUEST and is not sent, as Kafka's admin client does.

Also Kafka's ``toString`` of bindings and filters (``binding_text``, ``filter_text``, ``pattern_filter_text``,
``entry_filter_text``), which kafka-acls prints. Pure functions over a send callable; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_kafkalog.client.admin.admin_errors import AdminOperationError
from spark_kafkalog.client.admin.admin_steps import AdminRequest, AdminSteps, drive
from spark_kafkalog.client.errors import KafkaClientError, error_for_code
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)

__all__ = [
    "CREATE",
    "DELETE",
    "DESCRIBE",
    "DeleteAclsResult",
    "binding_text",
    "create_acls",
    "create_acls_steps",
    "deleted_or_raise",
    "create_request",
    "delete_acls",
    "delete_acls_steps",
    "delete_request",
    "describe_acls",
    "describe_acls_steps",
    "describe_request",
    "entry_filter_text",
    "filter_text",
    "parse_create_response",
    "parse_delete_response",
    "parse_describe_response",
    "pattern_filter_text",
]

DESCRIBE = int(ApiKey.DESCRIBE_ACLS)
CREATE = int(ApiKey.CREATE_ACLS)
DELETE = int(ApiKey.DELETE_ACLS)

Send = Callable[..., tuple[int, Any, "str | None"]]
"""``send(api_key, build, *, min_version, what)`` -> (version, response, broker address or None); ``build(version)``
makes the request body."""


# -- Kafka's toString ------------------------------------------------------------------------------
def binding_text(binding: AclBinding) -> str:
    """``(pattern=ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL), entry=(principal=User:a,
    host=*, operation=READ, permissionType=ALLOW))``, as Kafka's ``AclBinding.toString``."""
    return f"(pattern={binding.pattern}, entry={binding.entry})"


def pattern_filter_text(pattern: ResourcePatternFilter) -> str:
    """``ResourcePattern(resourceType=TOPIC, name=<any>, patternType=ANY)``, as Kafka's
    ``ResourcePatternFilter.toString`` (kafka-acls' "resource filter")."""
    name = "<any>" if pattern.name is None else pattern.name
    return (
        f"ResourcePattern(resourceType={pattern.resource_type.name}, name={name}, "
        f"patternType={pattern.pattern_type.name})"
    )


def entry_filter_text(entry: AccessControlEntryFilter) -> str:
    """``(principal=<any>, host=<any>, operation=ANY, permissionType=ANY)``, as Kafka's
    ``AccessControlEntryFilter.toString``."""
    principal = "<any>" if entry.principal is None else entry.principal
    host = "<any>" if entry.host is None else entry.host
    return (
        f"(principal={principal}, host={host}, operation={entry.operation.name}, "
        f"permissionType={entry.permission_type.name})"
    )


def filter_text(acl_filter: AclBindingFilter) -> str:
    """``(patternFilter=..., entryFilter=...)``, as Kafka's ``AclBindingFilter.toString``."""
    pattern, entry = pattern_filter_text(acl_filter.pattern), entry_filter_text(acl_filter.entry)
    return f"(patternFilter={pattern}, entryFilter={entry})"


# -- local validation ------------------------------------------------------------------------------
def _binding_problem(binding: AclBinding) -> str | None:
    """Why ``binding`` cannot be created (a field UNKNOWN, ANY or MATCH), or None."""
    p, e = binding.pattern, binding.entry
    fields: Sequence[tuple[str, Any, tuple[Any, ...]]] = (
        ("resource type", p.resource_type, (ResourceType.UNKNOWN, ResourceType.ANY)),
        ("pattern type", p.pattern_type, (PatternType.UNKNOWN, PatternType.ANY, PatternType.MATCH)),
        ("operation", e.operation, (AclOperation.UNKNOWN, AclOperation.ANY)),
        ("permission type", e.permission_type, (AclPermissionType.UNKNOWN, AclPermissionType.ANY)),
    )
    for what, value, refused in fields:
        if value in refused:
            return f"a binding's {what} must be specific, not {value.name}"
    return None


def _filter_problem(acl_filter: AclBindingFilter) -> str | None:
    unknown = acl_filter.unknown_field()
    return None if unknown is None else f"the filter's {unknown} is UNKNOWN"


def _invalid(what: str, problem: str) -> KafkaClientError:
    return KafkaClientError(
        f"{what} refused by the client: {ErrorCode.INVALID_REQUEST.name} ({int(ErrorCode.INVALID_REQUEST)}): {problem}",
        error_code=ErrorCode.INVALID_REQUEST,
    )


def _min_version(patterns: Iterable[ResourcePattern | ResourcePatternFilter], *, filters: bool) -> int:
    """The lowest version that can carry ``patterns``: 3 for the USER resource type, 1 for a pattern type other
    than LITERAL (v0 has no pattern type field: it means LITERAL, and a filter's ANY is read as LITERAL), else 0."""
    v0 = (PatternType.LITERAL, PatternType.ANY) if filters else (PatternType.LITERAL,)
    patterns = list(patterns)
    if any(p.resource_type is ResourceType.USER for p in patterns):
        return 3
    return 0 if all(p.pattern_type in v0 for p in patterns) else 1


# -- CreateAcls ------------------------------------------------------------------------------------
def create_request(bindings: Sequence[AclBinding], version: int) -> Any:
    """The CreateAcls body of ``bindings`` (v0 has no pattern type: only LITERAL bindings belong in it)."""
    R = API_BY_KEY[CREATE].Request
    return R(
        creations=[
            R.AclCreation(
                resource_type=int(b.pattern.resource_type),
                resource_name=b.pattern.name,
                resource_pattern_type=int(b.pattern.pattern_type),
                principal=b.entry.principal,
                host=b.entry.host,
                operation=int(b.entry.operation),
                permission_type=int(b.entry.permission_type),
            )
            for b in bindings
        ]
    )


def parse_create_response(
    bindings: Sequence[AclBinding], response: Any, peer: str | None
) -> dict[AclBinding, KafkaClientError]:
    """The bindings that failed with their errors (results are in the order of the request's creations)."""
    results = list(response.results)
    if len(results) != len(bindings):
        raise KafkaClientError(f"CreateAcls answered {len(results)} results for {len(bindings)} ACLs", broker=peer)
    return {
        b: error_for_code(r.error_code, f"CreateAcls of {binding_text(b)}", broker=peer, detail=r.error_message)
        for b, r in zip(bindings, results, strict=True)
        if r.error_code
    }


def create_acls(send: Send, bindings: Iterable[AclBinding]) -> dict[AclBinding, KafkaClientError]:
    """``create_acls_steps`` driven by the blocking ``send``."""
    return drive(create_acls_steps(bindings), send)


def create_acls_steps(bindings: Iterable[AclBinding]) -> AdminSteps[dict[AclBinding, KafkaClientError]]:
    """Create ``bindings`` (creating an existing ACL again succeeds); returns the bindings that failed with their
    errors. Bindings with a non-specific field fail here, the others are still sent."""
    failed: dict[AclBinding, KafkaClientError] = {}
    valid: list[AclBinding] = []
    for b in dict.fromkeys(bindings):
        problem = _binding_problem(b)
        if problem is None:
            valid.append(b)
        else:
            failed[b] = _invalid(f"CreateAcls of {binding_text(b)}", problem)
    if valid:
        _, response, peer = yield AdminRequest(
            CREATE,
            lambda version: create_request(valid, version),
            "CreateAcls",
            min_version=_min_version((b.pattern for b in valid), filters=False),
        )
        failed.update(parse_create_response(valid, response, peer))
    return failed


# -- DescribeAcls ----------------------------------------------------------------------------------
def _filter_fields(acl_filter: AclBindingFilter) -> dict[str, Any]:
    p, e = acl_filter.pattern, acl_filter.entry
    return dict(
        resource_type_filter=int(p.resource_type),
        resource_name_filter=p.name,
        pattern_type_filter=int(p.pattern_type),
        principal_filter=e.principal,
        host_filter=e.host,
        operation=int(e.operation),
        permission_type=int(e.permission_type),
    )


def describe_request(acl_filter: AclBindingFilter, version: int) -> Any:
    """The DescribeAcls body of ``acl_filter`` (v0 has no pattern type: LITERAL, or ANY read as LITERAL)."""
    return API_BY_KEY[DESCRIBE].Request(**_filter_fields(acl_filter))


def _pattern(resource_type: int, name: str, pattern_type: int) -> ResourcePattern:
    return ResourcePattern(ResourceType.from_code(resource_type), name, PatternType.from_code(pattern_type))


def _entry(principal: str, host: str, operation: int, permission_type: int) -> AccessControlEntry:
    return AccessControlEntry(
        principal, host, AclOperation.from_code(operation), AclPermissionType.from_code(permission_type)
    )


def parse_describe_response(response: Any, peer: str | None) -> list[AclBinding]:
    """The bindings of a DescribeAcls response, in the broker's order; a top-level error raises. Codes this
    client does not know read as UNKNOWN (as Kafka's client does). v0 answers LITERAL resources."""
    if response.error_code:
        raise error_for_code(response.error_code, "DescribeAcls", broker=peer, detail=response.error_message)
    return [
        AclBinding(
            _pattern(res.resource_type, res.resource_name, getattr(res, "pattern_type", PatternType.LITERAL)),
            _entry(a.principal, a.host, a.operation, a.permission_type),
        )
        for res in response.resources
        for a in res.acls
    ]


def describe_acls(send: Send, acl_filter: AclBindingFilter) -> list[AclBinding]:
    """``describe_acls_steps`` driven by the blocking ``send``."""
    return drive(describe_acls_steps(acl_filter), send)


def describe_acls_steps(acl_filter: AclBindingFilter) -> AdminSteps[list[AclBinding]]:
    """The ACLs that match ``acl_filter``; raises the broker's top-level error (SECURITY_DISABLED,
    CLUSTER_AUTHORIZATION_FAILED, ...), or INVALID_REQUEST here for a filter holding UNKNOWN."""
    problem = _filter_problem(acl_filter)
    if problem is not None:
        raise _invalid(f"DescribeAcls of {filter_text(acl_filter)}", problem)
    _, response, peer = yield AdminRequest(
        DESCRIBE,
        lambda version: describe_request(acl_filter, version),
        "DescribeAcls",
        min_version=_min_version([acl_filter.pattern], filters=True),
    )
    return parse_describe_response(response, peer)


# -- DeleteAcls ------------------------------------------------------------------------------------
@dataclass
class DeleteAclsResult:
    """What one filter of a DeleteAcls did: ``deleted`` the ACLs removed; ``error`` the filter's own failure
    (nothing deleted for it); ``failed`` the matched ACLs whose deletion failed, with their errors."""

    filter: AclBindingFilter
    deleted: list[AclBinding] = field(default_factory=list)
    error: KafkaClientError | None = None
    failed: dict[AclBinding, KafkaClientError] = field(default_factory=dict)


def delete_request(filters: Sequence[AclBindingFilter], version: int) -> Any:
    """The DeleteAcls body of ``filters`` (v0 has no pattern type, as for DescribeAcls)."""
    R = API_BY_KEY[DELETE].Request
    return R(filters=[R.DeleteAclsFilter(**_filter_fields(f)) for f in filters])


def parse_delete_response(
    filters: Sequence[AclBindingFilter], response: Any, peer: str | None
) -> list[DeleteAclsResult]:
    """One ``DeleteAclsResult`` per filter, in the request's order."""
    results = list(response.filter_results)
    if len(results) != len(filters):
        raise KafkaClientError(f"DeleteAcls answered {len(results)} results for {len(filters)} filters", broker=peer)
    out = []
    for f, r in zip(filters, results, strict=True):
        result = DeleteAclsResult(f)
        if r.error_code:
            result.error = error_for_code(
                r.error_code, f"DeleteAcls of {filter_text(f)}", broker=peer, detail=r.error_message
            )
        for m in r.matching_acls:
            binding = AclBinding(
                _pattern(m.resource_type, m.resource_name, getattr(m, "pattern_type", PatternType.LITERAL)),
                _entry(m.principal, m.host, m.operation, m.permission_type),
            )
            if m.error_code:
                result.failed[binding] = error_for_code(
                    m.error_code, f"DeleteAcls of {binding_text(binding)}", broker=peer, detail=m.error_message
                )
            else:
                result.deleted.append(binding)
        out.append(result)
    return out


def delete_acls(send: Send, filters: Iterable[AclBindingFilter]) -> list[DeleteAclsResult]:
    """``delete_acls_steps`` driven by the blocking ``send``."""
    return drive(delete_acls_steps(filters), send)


def delete_acls_steps(filters: Iterable[AclBindingFilter]) -> AdminSteps[list[DeleteAclsResult]]:
    """Delete the ACLs matching any of ``filters``, in one request; one result per filter, in order (a filter
    holding UNKNOWN fails here and is not sent)."""
    filters = list(filters)
    results = {i: DeleteAclsResult(f) for i, f in enumerate(filters)}
    sendable = []
    for i, f in enumerate(filters):
        problem = _filter_problem(f)
        if problem is None:
            sendable.append(i)
        else:
            results[i].error = _invalid(f"DeleteAcls of {filter_text(f)}", problem)
    if sendable:
        sent = [filters[i] for i in sendable]
        _, response, peer = yield AdminRequest(
            DELETE,
            lambda version: delete_request(sent, version),
            "DeleteAcls",
            min_version=_min_version((f.pattern for f in sent), filters=True),
        )
        for i, result in zip(sendable, parse_delete_response(sent, response, peer), strict=True):
            results[i] = result
    return [results[i] for i in range(len(filters))]


def deleted_or_raise(results: Iterable[DeleteAclsResult]) -> list[AclBinding]:
    """The ACLs ``results`` deleted (each once, in order); a failed filter or matched ACL raises one
    ``AdminOperationError`` keyed by the ``AclBindingFilter`` (or the ``AclBinding``)."""
    results = list(results)
    errors: dict[Any, KafkaClientError] = {}
    for r in results:
        if r.error is not None:
            errors[r.filter] = r.error
        errors.update(r.failed)
    if errors:
        raise AdminOperationError("DeleteAcls", errors)
    return list(dict.fromkeys(b for r in results for b in r.deleted))
