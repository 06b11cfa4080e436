"""DescribeAcls (key 29), v0-3 (flexible v2+; v1 adds the pattern type, v3 the USER resource type;
`kafka-acls --list`, AdminClient.describeAcls): the ACL bindings one filter matches, grouped by resource pattern,
answered by any broker from its authorizer's ACL cache (never ZooKeeper on the request path). Kafka's filter
semantics: resource type ANY matches every type; a null name every name; pattern type ANY the exact name under
any pattern type, MATCH every pattern that applies to the literal name (the name, the literal `*`, its
prefixes), LITERAL or PREFIXED exactly that; a null principal or host and operation or permission ANY match
all. A v0 filter is LITERAL (the field is absent), so v0 never sees PREFIXED ACLs.
Errors (top level): CLUSTER_AUTHORIZATION_FAILED without Describe on the cluster; SECURITY_DISABLED when no
authorizer is configured (`authorizer.class.name`). A filter field holding code 0 (UNKNOWN) is malformed, as
Kafka parses it: the connection is closed; any other unknown code matches nothing.
"""

from __future__ import annotations

from broker.api import CloseConnection
from spark_kafkalog.protocol import API_BY_KEY, ApiKey, ErrorCode
from spark_kafkalog.security.acl import AclOperation, PatternType, ResourcePattern

from ._acls import FILTER_CODE_FIELDS, binding_filter, cluster_denied, has_unknown_code

API_KEY = ApiKey.DESCRIBE_ACLS
VERSIONS = (0, 3)
_API = API_BY_KEY[API_KEY]


async def handle(ctx, request):
    R = _API.Response
    unknown = has_unknown_code([request], *FILTER_CODE_FIELDS)
    if unknown is not None:
        return CloseConnection(f"DescribeAcls filter has {unknown} 0 (UNKNOWN): malformed, as Kafka parses it")
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        return R(
            throttle_time_ms=0,
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            error_message=cluster_denied(ctx.principal, AclOperation.DESCRIBE),
        )
    authorizer = ctx.services.authorizer
    if not authorizer.enabled:
        return R(
            throttle_time_ms=0,
            error_code=ErrorCode.SECURITY_DISABLED,
            error_message="No Authorizer is configured on the broker",
        )
    grouped: dict[ResourcePattern, list] = {}
    for binding in authorizer.acls(binding_filter(request)):
        if ctx.version == 0 and binding.pattern.pattern_type is not PatternType.LITERAL:
            continue  # a v0 response cannot carry a pattern type (a LITERAL filter never gets here anyway)
        e = binding.entry
        grouped.setdefault(binding.pattern, []).append(
            R.DescribeAclsResource.AclDescription(
                principal=e.principal, host=e.host, operation=e.operation, permission_type=e.permission_type
            )
        )
    resources = [
        R.DescribeAclsResource(
            resource_type=p.resource_type, resource_name=p.name, pattern_type=p.pattern_type, acls=acls
        )
        for p, acls in grouped.items()
    ]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, resources=resources)
