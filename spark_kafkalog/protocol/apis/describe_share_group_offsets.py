"""DescribeShareGroupOffsets (key 90), v0-1, flexible (KIP-932; admin to group coordinator).
The start offset (SPSO) of each share-partition of the named groups; ``topics`` null asks for every partition
the group has state for. Unknown partitions answer start offset -1. v1 adds ``lag`` (-1: unknown). Errors per
group and per partition.
"""

from ..schema import declare_api

API = declare_api(
    90,
    "DescribeShareGroupOffsets",
    versions="0-1",
    flexible="0+",
    request="""
        groups                     []DescribeShareGroupOffsetsRequestGroup
          group_id                 string
          topics                   []DescribeShareGroupOffsetsRequestTopic?
            topic_name             string
            partitions             []int32
    """,
    response="""
        throttle_time_ms           int32
        groups                     []DescribeShareGroupOffsetsResponseGroup
          group_id                 string
          topics                   []DescribeShareGroupOffsetsResponseTopic
            topic_name             string
            topic_id               uuid
            partitions             []DescribeShareGroupOffsetsResponsePartition
              partition_index      int32
              start_offset         int64
              leader_epoch         int32
              lag                  int64       v1+ default=-1
              error_code           int16
              error_message        string?     default=null
          error_code               int16
          error_message            string?     default=null
    """,
)
