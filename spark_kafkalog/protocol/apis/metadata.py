"""Metadata (key 3), v0-13; flexible from v9.
v0 has no null topic list (empty = all topics); v10+ adds topic ids and makes request topic names nullable;
v13 adds a top-level ``error_code`` (KIP-1102: REBOOTSTRAP_REQUIRED tells the client to bootstrap again)."""

from ..schema import declare_api

API = declare_api(
    3,
    "Metadata",
    versions="0-13",
    flexible="9+",
    request="""
        topics                     []MetadataRequestTopic  null1+
          topic_id                 uuid        v10+
          name                     string      null10+
        allow_auto_topic_creation  bool        v4+ default=true
        include_cluster_authorized_operations  bool  v8-10
        include_topic_authorized_operations    bool  v8+
    """,
    response="""
        throttle_time_ms           int32       v3+
        brokers                    []MetadataResponseBroker
          node_id                  int32
          host                     string
          port                     int32
          rack                     string?     v1+ default=null
        cluster_id                 string?     v2+ default=null
        controller_id              int32       v1+ default=-1
        topics                     []MetadataResponseTopic
          error_code               int16
          name                     string      null12+
          topic_id                 uuid        v10+
          is_internal              bool        v1+ default=false
          partitions               []MetadataResponsePartition
            error_code             int16
            partition_index        int32
            leader_id              int32
            leader_epoch           int32       v7+ default=-1
            replica_nodes          []int32
            isr_nodes              []int32
            offline_replicas       []int32     v5+
          topic_authorized_operations  int32   v8+ default=-2147483648
        cluster_authorized_operations  int32   v8-10 default=-2147483648
        error_code                 int16       v13+
    """,
)
