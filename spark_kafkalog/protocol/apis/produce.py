"""Produce (key 0), v0-9; flexible from v9. v0-2 carry v0/v1 message sets, v3+ RecordBatch v2."""

from ..schema import declare_api

API = declare_api(
    0,
    "Produce",
    versions="0-9",
    flexible="9+",
    request="""
        transactional_id           string?     v3+ default=null
        acks                       int16
        timeout_ms                 int32
        topic_data                 []TopicProduceData
          name                     string
          partition_data           []PartitionProduceData
            index                  int32
            records                records?
    """,
    response="""
        responses                  []TopicProduceResponse
          name                     string
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
        throttle_time_ms           int32       v1+ default=0
    """,
)
