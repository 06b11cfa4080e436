"""DeleteAcls (key 31), v0-3; flexible from v2.
ACL binding filters in; per filter an error and every ACL it matched (and deleted), each with its own error.
v1 adds the pattern type (absent in v0: LITERAL, code 3), v3 the USER resource type. Codes are Kafka's int8
enums (``spark_kafkalog.security.acl``)."""

from ..schema import declare_api

API = declare_api(
    31,
    "DeleteAcls",
    versions="0-3",
    flexible="2+",
    request="""
        filters                    []DeleteAclsFilter
          resource_type_filter     int8
          resource_name_filter     string?
          pattern_type_filter      int8        v1+ default=3
          principal_filter         string?
          host_filter              string?
          operation                int8
          permission_type          int8
    """,
    response="""
        throttle_time_ms           int32
        filter_results             []DeleteAclsFilterResult
          error_code               int16
          error_message            string?
          matching_acls            []DeleteAclsMatchingAcl
            error_code             int16
            error_message          string?
            resource_type          int8
            resource_name          string
            pattern_type           int8        v1+ default=3
            principal              string
            host                   string
            operation              int8
            permission_type        int8
    """,
)
