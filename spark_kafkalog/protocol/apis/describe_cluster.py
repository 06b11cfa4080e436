"""DescribeCluster (key 60), v0-2; flexible from v0. v1+ selects brokers or controllers via endpoint_type; v2 asks for fenced brokers too
(``include_fenced_brokers``) and marks each broker ``is_fenced`` (KIP-1073)."""

from ..schema import declare_api

API = declare_api(
    60,
    "DescribeCluster",
    versions="0-2",
    flexible="0+",
    request="""
        include_cluster_authorized_operations  bool
        endpoint_type              int8        v1+ default=1
        include_fenced_brokers     bool        v2+
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        endpoint_type              int8        v1+ default=1
        cluster_id                 string
        controller_id              int32       default=-1
        brokers                    []DescribeClusterBroker
          broker_id                int32
          host                     string
          port                     int32
          rack                     string?     default=null
          is_fenced                bool        v2+
        cluster_authorized_operations  int32   default=-2147483648
    """,
)
