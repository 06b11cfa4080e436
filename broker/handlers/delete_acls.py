"""DeleteAcls (key 31), v0-3 (flexible v2+; v1 adds the pattern type, absent in v0 and so LITERAL: v0 never
matches or deletes PREFIXED ACLs; v3 the USER resource type; `kafka-acls --remove`, AdminClient.deleteAcls):
served by every broker, as in Kafka's ZooKeeper mode. The resource patterns examined are those in this broker's
ACL cache plus, for a filter naming exactly one pattern (a type, a name, LITERAL or PREFIXED), that pattern;
each one any filter's pattern part matches is rewritten once, by a compare-and-set read-modify-write of its
node that removes exactly the entries some filter matches in what is stored now and keeps every other ACL of
the resource (CVE-2024-27309), leaving a change notice; the result goes into this broker's cache at once.
Filter semantics as DescribeAcls. Per filter, every binding it deleted, each in the result of the first
filter that matched it (as Kafka), with its own error: UNKNOWN_SERVER_ERROR when its resource's write failed.
Every filter gets CLUSTER_AUTHORIZATION_FAILED without Alter on the cluster, SECURITY_DISABLED when no
authorizer is configured. A filter field holding code 0 (UNKNOWN) is malformed, as Kafka parses it: the
connection is closed; any other unknown code matches nothing.
"""

from __future__ import annotations

import logging

from broker.api import CloseConnection
from broker.cluster.registry import RegistryError
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    ResourcePattern,
    ResourceType,
)

from ._acls import FILTER_CODE_FIELDS, NO_AUTHORIZER, binding_filter, cluster_denied, has_unknown_code

API_KEY = ApiKey.DELETE_ACLS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]
_log = logging.getLogger("kafkalog.handlers.acls")


def _exact_pattern(f: AclBindingFilter) -> ResourcePattern | None:
    """The one pattern a filter can match (Kafka's ``matchesAtMostOne``), if it names one an ACL can have."""
    p = f.pattern
    if p.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN) or p.name is None:
        return None
    if not p.pattern_type.is_specific or "/" in p.name:
        return None
    return ResourcePattern(p.resource_type, p.name, p.pattern_type)


class _Removal:
    """The update of one resource's entries: drops those a filter matches, remembering which filter (the
    first) matched each. Re-run from scratch on each compare-and-set attempt; the last run is what was stored."""

    def __init__(self, pattern: ResourcePattern, filters: list[tuple[int, AclBindingFilter]]) -> None:
        self.pattern = pattern
        self.filters = filters
        self.matched: dict[AccessControlEntry, int] = {}

    def match(self, entries: frozenset[AccessControlEntry]) -> dict[AccessControlEntry, int]:
        matched = {}
        for entry in entries:
            for index, f in self.filters:
                if f.entry.matches(entry):
                    matched[entry] = index
                    break
        return matched

    def __call__(self, current: frozenset[AccessControlEntry]) -> frozenset[AccessControlEntry]:
        self.matched = self.match(current)
        return current - self.matched.keys()


async def handle(ctx, request):
    R = _API.Response
    FilterResult, MatchingAcl = R.DeleteAclsFilterResult, R.DeleteAclsFilterResult.DeleteAclsMatchingAcl
    unknown = has_unknown_code(request.filters, *FILTER_CODE_FIELDS)
    if unknown is not None:
        return CloseConnection(f"DeleteAcls filter has {unknown} 0 (UNKNOWN): malformed, as Kafka parses it")

    def everyone(code: int, message: str):
        return R(
            throttle_time_ms=0,
            filter_results=[FilterResult(error_code=code, error_message=message) for _ in request.filters],
        )

    if not ctx.authorize_cluster(AclOperation.ALTER):
        return everyone(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, cluster_denied(ctx.principal, AclOperation.ALTER))
    services = ctx.services
    authorizer = services.authorizer
    if not authorizer.enabled:
        return everyone(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    filters = list(enumerate(binding_filter(f) for f in request.filters))
    patterns = {b.pattern for b in authorizer.acls(AclBindingFilter())}
    patterns.update(p for _, f in filters if (p := _exact_pattern(f)) is not None)
    registry = services.registry
    deleted: list[list[tuple[AclBinding, int, str | None]]] = [[] for _ in filters]
    for pattern in sorted(patterns):
        matching = [(i, f) for i, f in filters if f.pattern.matches(pattern)]
        if not matching:
            continue
        removal = _Removal(pattern, matching)
        removal.matched = removal.match(authorizer.resource_acls(pattern))  # what failing writes report

        def write(pattern=pattern, removal=removal):
            return registry.update_resource_acls(pattern, removal)

        code, message = ErrorCode.NONE, None
        try:
            await services.run_blocking(authorizer.write_resource, pattern, write)
        except (RegistryError, ValueError) as exc:
            _log.warning("DeleteAcls: could not delete ACLs of %s: %s", pattern, exc)
            code, message = ErrorCode.UNKNOWN_SERVER_ERROR, f"Could not delete the ACLs of {pattern}: {exc}"
        for entry, index in sorted(removal.matched.items()):
            deleted[index].append((AclBinding(pattern, entry), code, message))
    return R(
        throttle_time_ms=0,
        filter_results=[
            FilterResult(
                error_code=ErrorCode.NONE,
                error_message=None,
                matching_acls=[
                    MatchingAcl(
                        error_code=code,
                        error_message=message,
                        resource_type=b.pattern.resource_type,
                        resource_name=b.pattern.name,
                        pattern_type=b.pattern.pattern_type,
                        principal=b.entry.principal,
                        host=b.entry.host,
                        operation=b.entry.operation,
                        permission_type=b.entry.permission_type,
                    )
                    for b, code, message in matches
                ],
            )
            for matches in deleted
        ],
    )
