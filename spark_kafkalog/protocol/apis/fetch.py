"""Fetch (key 1), v0-18; flexible from v12.
v0-3 return v0/v1 message sets, v4+ RecordBatch v2; v7+ fetch sessions (KIP-227); topics by name up to v12,
by topic id from v13 (KIP-516); v15 moves the follower's id into the tagged ``replica_state`` (KIP-903);
v16 answers ``node_endpoints`` of the leaders it names (KIP-951); v17 adds the follower's directory id (KIP-853), v18 the tagged
``high_watermark`` the fetching replica knows (KIP-1166; Long.MAX_VALUE when the sender does not track it).
"""

from ..schema import declare_api

API = declare_api(
    1,
    "Fetch",
    versions="0-18",
    flexible="12+",
    request="""
        cluster_id                 string?     v12+ tag0 default=null
        replica_id                 int32       v0-14 default=-1
        replica_state              ReplicaState  v15+ tag1
          replica_id               int32       default=-1
          replica_epoch            int64       default=-1
        max_wait_ms                int32
        min_bytes                  int32
        max_bytes                  int32       v3+ default=0x7fffffff
        isolation_level            int8        v4+ default=0
        session_id                 int32       v7+ default=0
        session_epoch              int32       v7+ default=-1
        topics                     []FetchTopic
          topic                    string      v0-12
          topic_id                 uuid        v13+
          partitions               []FetchPartition
            partition              int32
            current_leader_epoch   int32       v9+ default=-1
            fetch_offset           int64
            last_fetched_epoch     int32       v12+ default=-1
            log_start_offset       int64       v5+ default=-1
            partition_max_bytes    int32
            replica_directory_id   uuid        v17+ tag0
            high_watermark         int64       v18+ tag1 default=0x7fffffffffffffff
        forgotten_topics_data      []ForgottenTopic  v7+
          topic                    string      v7-12
          topic_id                 uuid        v13+
          partitions               []int32
        rack_id                    string      v11+ default=
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16       v7+
        session_id                 int32       v7+ default=0
        responses                  []FetchableTopicResponse
          topic                    string      v0-12
          topic_id                 uuid        v13+
          partitions               []PartitionData
            partition_index        int32
            error_code             int16
            high_watermark         int64
            last_stable_offset     int64       v4+ default=-1
            log_start_offset       int64       v5+ default=-1
            diverging_epoch        EpochEndOffset  v12+ tag0
              epoch                int32       default=-1
              end_offset           int64       default=-1
            current_leader         LeaderIdAndEpoch  v12+ tag1
              leader_id            int32       default=-1
              leader_epoch         int32       default=-1
            snapshot_id            SnapshotId  v12+ tag2
              end_offset           int64       default=-1
              epoch                int32       default=-1
            aborted_transactions   []AbortedTransaction  v4+ null4+
              producer_id          int64
              first_offset         int64
            preferred_read_replica int32       v11+ default=-1
            records                records?
        node_endpoints             []NodeEndpoint  v16+ tag0
          node_id                  int32
          host                     string
          port                     int32
          rack                     string?     default=null
    """,
)
