"""Produce (key 0), v0-13; flexible from v9. v0-2 carry v0/v1 message sets, v3+ RecordBatch v2. v10 adds the
tagged ``current_leader``/``node_endpoints`` (KIP-951), v11 TRANSACTION_ABORTABLE (KIP-890), v12 means a
transactional producer uses transactions v2: the leader adds the partition to the transaction itself; v13 names topics by id instead of by name (KIP-516).
"""

from ..schema import declare_api

API = declare_api(
    0,
    "Produce",
    versions="0-13",
    flexible="9+",
    request="""
        transactional_id           string?     v3+ default=null
        acks                       int16
        timeout_ms                 int32
        topic_data                 []TopicProduceData
          name                     string      v0-12
          topic_id                 uuid        v13+
          partition_data           []PartitionProduceData
            index                  int32
            records                records?
    """,
    response="""
        responses                  []TopicProduceResponse
          name                     string      v0-12
          topic_id                 uuid        v13+
          partition_responses      []PartitionProduceResponse
            index                  int32
            error_code             int16
            base_offset            int64
            log_append_time_ms     int64       v2+ default=-1
            log_start_offset       int64       v5+ default=-1
            record_errors          []BatchIndexAndErrorMessage  v8+
              batch_index          int32
              batch_index_error_message  string?  default=null
            error_message          string?     v8+ default=null
            current_leader         LeaderIdAndEpoch  v10+ tag0
              leader_id            int32       default=-1
              leader_epoch         int32       default=-1
        throttle_time_ms           int32       v1+ default=0
        node_endpoints             []NodeEndpoint  v10+ tag0
          node_id                  int32
          host                     string
          port                     int32
          rack                     string?     default=null
    """,
)
