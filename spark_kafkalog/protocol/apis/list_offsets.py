"""ListOffsets (key 2), v0-11; flexible from v6.
v0 asks for up to max_num_offsets offsets and answers with an offset list (no timestamp); v1+ one offset;
v7 adds timestamp -3 (max timestamp, KIP-734), v8 -4 (earliest local, KIP-405), v9 -5 (latest tiered,
KIP-1005), v10 ``timeout_ms`` for reads from remote storage (KIP-1075), v11 -6 (earliest pending upload, KIP-1023)."""

from ..schema import declare_api

API = declare_api(
    2,
    "ListOffsets",
    versions="0-11",
    flexible="6+",
    request="""
        replica_id                 int32
        isolation_level            int8        v2+
        topics                     []ListOffsetsTopic
          name                     string
          partitions               []ListOffsetsPartition
            partition_index        int32
            current_leader_epoch   int32       v4+ default=-1
            timestamp              int64
            max_num_offsets        int32       v0 default=1
        timeout_ms                 int32       v10+
    """,
    response="""
        throttle_time_ms           int32       v2+
        topics                     []ListOffsetsTopicResponse
          name                     string
          partitions               []ListOffsetsPartitionResponse
            partition_index        int32
            error_code             int16
            old_style_offsets      []int64     v0
            timestamp              int64       v1+ default=-1
            offset                 int64       v1+ default=-1
            leader_epoch           int32       v4+ default=-1
    """,
)
