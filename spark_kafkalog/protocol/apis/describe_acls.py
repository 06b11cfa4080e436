"""DescribeAcls (key 29), v0-3; flexible from v2.
One ACL binding filter in; the matching ACLs grouped by resource pattern out, with a top-level error. v1 adds
the pattern type (absent in v0: LITERAL, code 3), v3 the USER resource type. Codes are Kafka's int8 enums
(``spark_kafkalog.security.acl``)."""

from ..schema import declare_api

API = declare_api(
    29,
    "DescribeAcls",
    versions="0-3",
    flexible="2+",
    request="""
        resource_type_filter       int8
        resource_name_filter       string?
        pattern_type_filter        int8        v1+ default=3
        principal_filter           string?
        host_filter                string?
        operation                  int8
        permission_type            int8
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?
        resources                  []DescribeAclsResource
          resource_type            int8
          resource_name            string
          pattern_type             int8        v1+ default=3
          acls                     []AclDescription
            principal              string
            host                   string
            operation              int8
            permission_type        int8
    """,
)
