"""AlterPartitionReassignments (key 45), v0; flexible from v0 (KIP-455). Served by the controller.
A null replica list cancels the partition's ongoing reassignment."""

from ..schema import declare_api

API = declare_api(
    45,
    "AlterPartitionReassignments",
    versions="0",
    flexible="0+",
    request="""
        timeout_ms                 int32       default=60000
        topics                     []ReassignableTopic
          name                     string
          partitions               []ReassignablePartition
            partition_index        int32
            replicas               []int32?    default=null
    """,
    response="""
        throttle_time_ms           int32
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
