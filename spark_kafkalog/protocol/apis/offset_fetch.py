"""OffsetFetch (key 9), v0-7; flexible from v6.
v2+: null topics = all of the group's partitions, plus a top-level error_code; v8+ (batched groups) not declared."""

from ..schema import declare_api

API = declare_api(
    9,
    "OffsetFetch",
    versions="0-7",
    flexible="6+",
    request="""
        group_id                   string
        topics                     []OffsetFetchRequestTopic  null2+
          name                     string
          partition_indexes        []int32
        require_stable             bool        v7+ default=false
    """,
    response="""
        throttle_time_ms           int32       v3+
        topics                     []OffsetFetchResponseTopic
          name                     string
          partitions               []OffsetFetchResponsePartition
            partition_index        int32
            committed_offset       int64
            committed_leader_epoch int32       v5+ default=-1
            metadata               string?
            error_code             int16
        error_code                 int16       v2+ default=0
    """,
)
