"""CreatePartitions (key 37), v0-3; flexible from v2.
A null assignment list lets the broker place the new partitions."""

from ..schema import declare_api

API = declare_api(
    37,
    "CreatePartitions",
    versions="0-3",
    flexible="2+",
    request="""
        topics                     []CreatePartitionsTopic
          name                     string
          count                    int32
          assignments              []CreatePartitionsAssignment?
            broker_ids             []int32
        timeout_ms                 int32
        validate_only              bool
    """,
    response="""
        throttle_time_ms           int32
        results                    []CreatePartitionsTopicResult
          name                     string
          error_code               int16
          error_message            string?     default=null
    """,
)
