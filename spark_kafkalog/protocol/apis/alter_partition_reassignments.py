"""AlterPartitionReassignments (key 45), v0-1; flexible from v0 (KIP-455). Served by the controller.
A null replica list cancels the partition's ongoing reassignment. v1 may forbid changing a partition's replication factor
(``allow_replication_factor_change``, echoed in the response; KIP-1178)."""

from ..schema import declare_api

API = declare_api(
    45,
    "AlterPartitionReassignments",
    versions="0-1",
    flexible="0+",
    request="""
        timeout_ms                 int32       default=60000
        allow_replication_factor_change  bool  v1+ default=true
        topics                     []ReassignableTopic
          name                     string
          partitions               []ReassignablePartition
            partition_index        int32
            replicas               []int32?    default=null
    """,
    response="""
        throttle_time_ms           int32
        allow_replication_factor_change  bool  v1+ default=true
        error_code                 int16
        error_message              string?
        responses                  []ReassignableTopicResponse
          name                     string
          partitions               []ReassignablePartitionResponse
            partition_index        int32
            error_code             int16
            error_message          string?
    """,
)
