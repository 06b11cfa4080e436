"""OffsetFetch (key 9), v0-10; flexible from v6.
v2+: null topics = all of the group's partitions, plus a top-level error_code; v8+ batch groups (``groups``
in and out, a per-group error code; KIP-709); v9 adds the member id and epoch of KIP-848 members; v10 names topics by id instead of by name
(UNKNOWN_TOPIC_ID)."""

from ..schema import declare_api

API = declare_api(
    9,
    "OffsetFetch",
    versions="0-10",
    flexible="6+",
    request="""
        group_id                   string      v0-7
        topics                     []OffsetFetchRequestTopic  v0-7 null2-7
          name                     string
          partition_indexes        []int32
        groups                     []OffsetFetchRequestGroup  v8+
          group_id                 string
          member_id                string?     v9+ default=null
          member_epoch             int32       v9+ default=-1
          topics                   []OffsetFetchRequestTopics  null8+
            name                   string      v8-9
            topic_id               uuid        v10+
            partition_indexes      []int32
        require_stable             bool        v7+ default=false
    """,
    response="""
        throttle_time_ms           int32       v3+
        topics                     []OffsetFetchResponseTopic  v0-7
          name                     string
          partitions               []OffsetFetchResponsePartition
            partition_index        int32
            committed_offset       int64
            committed_leader_epoch int32       v5+ default=-1
            metadata               string?
            error_code             int16
        error_code                 int16       v2-7 default=0
        groups                     []OffsetFetchResponseGroup  v8+
          group_id                 string
          topics                   []OffsetFetchResponseTopics
            name                   string      v8-9
            topic_id               uuid        v10+
            partitions             []OffsetFetchResponsePartitions
              partition_index      int32
              committed_offset     int64
              committed_leader_epoch  int32    default=-1
              metadata             string?
              error_code           int16
          error_code               int16       default=0
    """,
)
