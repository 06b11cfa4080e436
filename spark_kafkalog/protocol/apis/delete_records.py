"""DeleteRecords (key 21), v0-2; flexible from v2."""

from ..schema import declare_api

API = declare_api(
    21,
    "DeleteRecords",
    versions="0-2",
    flexible="2+",
    request="""
        topics                     []DeleteRecordsTopic
          name                     string
          partitions               []DeleteRecordsPartition
            partition_index        int32
            offset                 int64
        timeout_ms                 int32
    """,
    response="""
        throttle_time_ms           int32
        topics                     []DeleteRecordsTopicResult
          name                     string
          partitions               []DeleteRecordsPartitionResult
            partition_index        int32
            low_watermark          int64
            error_code             int16
    """,
)
