"""OffsetForLeaderEpoch (key 23), v0-4; flexible from v4. v0 answers without leader_epoch; v3+ carries replica_id."""

from ..schema import declare_api

API = declare_api(
    23,
    "OffsetForLeaderEpoch",
    versions="0-4",
    flexible="4+",
    request="""
        replica_id                 int32       v3+ default=-2
        topics                     []OffsetForLeaderTopic
          topic                    string
          partitions               []OffsetForLeaderPartition
            partition              int32
            current_leader_epoch   int32       v2+ default=-1
            leader_epoch           int32
    """,
    response="""
        throttle_time_ms           int32       v2+
        topics                     []OffsetForLeaderTopicResult
          topic                    string
          partitions               []EpochEndOffset
            error_code             int16
            partition              int32
            leader_epoch           int32       v1+ default=-1
            end_offset             int64       default=-1
    """,
)
