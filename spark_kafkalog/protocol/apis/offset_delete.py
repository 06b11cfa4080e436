"""OffsetDelete (key 47), v0; never flexible. The response puts error_code before throttle_time_ms."""

from ..schema import declare_api

API = declare_api(
    47,
    "OffsetDelete",
    versions="0",
    flexible="none",
    request="""
        group_id                   string
        topics                     []OffsetDeleteRequestTopic
          name                     string
          partitions               []OffsetDeleteRequestPartition
            partition_index        int32
    """,
    response="""
        error_code                 int16
        throttle_time_ms           int32
        topics                     []OffsetDeleteResponseTopic
          name                     string
          partitions               []OffsetDeleteResponsePartition
            partition_index        int32
            error_code             int16
    """,
)
