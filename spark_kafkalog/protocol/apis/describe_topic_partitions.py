"""DescribeTopicPartitions (key 75), v0, flexible (KIP-966).
Topic and partition metadata, paged; the admin client's replacement for Metadata when describing topics: topics by
name (an empty list: every topic the caller may describe), at most ``response_partition_limit`` partitions per
response, resumed from ``cursor`` (a topic name and the first partition index to return; null: from the start). The
response's ``next_cursor`` says where the next page starts (null: nothing left). Partitions carry the eligible
leader replicas and the last known ELR of KIP-966 (null where the broker does not track them)."""

from ..schema import declare_api

API = declare_api(
    75,
    "DescribeTopicPartitions",
    versions="0",
    flexible="0+",
    request="""
        topics                     []TopicRequest
          name                     string
        response_partition_limit   int32       default=2000
        cursor                     Cursor?     default=null
          topic_name               string
          partition_index          int32
    """,
    response="""
        throttle_time_ms           int32
        topics                     []DescribeTopicPartitionsResponseTopic
          error_code               int16
          name                     string?
          topic_id                 uuid
          is_internal              bool        default=false
          partitions               []DescribeTopicPartitionsResponsePartition
            error_code             int16
            partition_index        int32
            leader_id              int32
            leader_epoch           int32       default=-1
            replica_nodes          []int32
            isr_nodes              []int32
            eligible_leader_replicas  []int32?  default=null
            last_known_elr         []int32?    default=null
            offline_replicas       []int32
          topic_authorized_operations  int32   default=-2147483648
        next_cursor                Cursor?     default=null
          topic_name               string
          partition_index          int32
    """,
)
