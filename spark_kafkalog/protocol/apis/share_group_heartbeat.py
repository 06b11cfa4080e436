"""ShareGroupHeartbeat (key 76), v1, flexible (KIP-932).
The one membership request of a share group: a member joins with ``member_epoch`` 0 and a member id it generated
itself (v1: the client's UUID; an empty id is INVALID_REQUEST), heartbeats with its current epoch and leaves with
-1. ``subscribed_topic_names`` is null when unchanged since the last heartbeat. The response carries the member's
epoch, the heartbeat interval and, when it changed, the partitions the member may share-fetch now (null: no
change). v0 (KIP-932's early access, where the coordinator chose the member id) is not served: Kafka 4.4 dropped it.
"""

from ..schema import declare_api

API = declare_api(
    76,
    "ShareGroupHeartbeat",
    versions="1",
    flexible="0+",
    request="""
        group_id                   string
        member_id                  string
        member_epoch               int32
        rack_id                    string?     default=null
        subscribed_topic_names     []string?   default=null
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
