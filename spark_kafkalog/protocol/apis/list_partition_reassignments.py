"""ListPartitionReassignments (key 46), v0; flexible from v0 (KIP-455). Served by the controller.
A null topic list asks for every ongoing reassignment."""

from ..schema import declare_api

API = declare_api(
    46,
    "ListPartitionReassignments",
    versions="0",
    flexible="0+",
    request="""
        timeout_ms                 int32       default=60000
        topics                     []ListPartitionReassignmentsTopics?  default=null
          name                     string
          partition_indexes        []int32
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?
        topics                     []OngoingTopicReassignment
          name                     string
          partitions               []OngoingPartitionReassignment
            partition_index        int32
            replicas               []int32
            adding_replicas        []int32
            removing_replicas      []int32
    """,
)
