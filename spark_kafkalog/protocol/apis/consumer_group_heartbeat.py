"""ConsumerGroupHeartbeat (key 68), v0-1, flexible (KIP-848).
The one request of the new consumer group protocol: a member joins with ``member_epoch`` 0 (the coordinator answers
with its member id), heartbeats with its current epoch, and leaves with -1 (-2: a static member leaving to rejoin).
Fields that did not change since the last heartbeat are sent as null (or -1 for ``rebalance_timeout_ms``);
``topic_partitions`` are the partitions the member owns, by topic id. The response carries the member's epoch, the
heartbeat interval and, when it changed, the partitions the member may consume now (null: no change). v1 adds
``subscribed_topic_regex`` (a RE2/J pattern resolved by the broker)."""

from ..schema import declare_api

API = declare_api(
    68,
    "ConsumerGroupHeartbeat",
    versions="0-1",
    flexible="0+",
    request="""
        group_id                   string
        member_id                  string
        member_epoch               int32
        instance_id                string?     default=null
        rack_id                    string?     default=null
        rebalance_timeout_ms       int32       default=-1
        subscribed_topic_names     []string?   default=null
        subscribed_topic_regex     string?     v1+ default=null
        server_assignor            string?     default=null
        topic_partitions           []TopicPartitions?  default=null
          topic_id                 uuid
          partitions               []int32
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        member_id                  string?     default=null
        member_epoch               int32
        heartbeat_interval_ms      int32
        assignment                 Assignment?  default=null
          topic_partitions         []TopicPartitions
            topic_id               uuid
            partitions             []int32
    """,
)
