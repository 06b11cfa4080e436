"""CreateAcls (key 30), v0-3; flexible from v2.
ACL bindings to create; one result (error code and message) per creation, in request order. v1 adds the
resource pattern type (absent in v0: LITERAL, code 3), v3 the USER resource type. Codes are Kafka's int8 enums
(``spark_kafkalog.security.acl``)."""

from ..schema import declare_api

API = declare_api(
    30,
    "CreateAcls",
    versions="0-3",
    flexible="2+",
    request="""
        creations                  []AclCreation
          resource_type            int8
          resource_name            string
          resource_pattern_type    int8        v1+ default=3
          principal                string
          host                     string
          operation                int8
          permission_type          int8
    """,
    response="""
        throttle_time_ms           int32
        results                    []AclCreationResult
          error_code               int16
          error_message            string?
    """,
)
