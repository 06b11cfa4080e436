"""ShareGroupDescribe (key 77), v1, flexible (KIP-932).
Describes share groups by id: state, group and assignment epochs, assignor, and each member with its
subscription and assigned partitions (by topic id and name). A group that is not a share group answers
GROUP_ID_NOT_FOUND. ``authorized_operations`` is the int32 bit set of ACL operations (-2^31: not asked for).
v0 (early access) is not served: Kafka 4.4 dropped it.
"""

from ..schema import declare_api

API = declare_api(
    77,
    "ShareGroupDescribe",
    versions="1",
    flexible="0+",
    request="""
        group_ids                  []string
        include_authorized_operations  bool
    """,
    response="""
        throttle_time_ms           int32
        groups                     []DescribedGroup
          error_code               int16
          error_message            string?     default=null
          group_id                 string
          group_state              string
          group_epoch              int32
          assignment_epoch         int32
          assignor_name            string
          members                  []Member
            member_id              string
            rack_id                string?     default=null
            member_epoch           int32
            client_id              string
            client_host            string
            subscribed_topic_names []string
            assignment             Assignment
              topic_partitions     []TopicPartitions
                topic_id           uuid
                topic_name         string
                partitions         []int32
          authorized_operations    int32       default=-2147483648
    """,
)
