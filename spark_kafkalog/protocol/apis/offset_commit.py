"""OffsetCommit (key 8), v0-10; flexible from v8.
v0 has no generation or member id; only v1 has a per-partition commit timestamp; v2-4 a retention time;
v9 has v8's shape (it may carry a KIP-848 member epoch and answer GROUP_ID_NOT_FOUND);
v10 names topics by id instead of by name (KIP-848; UNKNOWN_TOPIC_ID)."""

from ..schema import declare_api

API = declare_api(
    8,
    "OffsetCommit",
    versions="0-10",
    flexible="8+",
    request="""
        group_id                   string
        generation_id_or_member_epoch  int32   v1+ default=-1
        member_id                  string      v1+
        group_instance_id          string?     v7+ default=null
        retention_time_ms          int64       v2-4 default=-1
        topics                     []OffsetCommitRequestTopic
          name                     string      v0-9
          topic_id                 uuid        v10+
          partitions               []OffsetCommitRequestPartition
            partition_index        int32
            committed_offset       int64
            committed_leader_epoch int32       v6+ default=-1
            commit_timestamp       int64       v1 default=-1
            committed_metadata     string?
    """,
    response="""
        throttle_time_ms           int32       v3+
        topics                     []OffsetCommitResponseTopic
          name                     string      v0-9
          topic_id                 uuid        v10+
          partitions               []OffsetCommitResponsePartition
            partition_index        int32
            error_code             int16
    """,
)
