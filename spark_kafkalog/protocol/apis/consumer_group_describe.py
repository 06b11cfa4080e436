"""ConsumerGroupDescribe (key 69), v0-1, flexible (KIP-848).
Describes consumer groups (the "consumer" group protocol): state, group epoch, target assignment epoch, the
server-side assignor, and per member its epoch, subscription (topic names and/or a regex), current and target
assignment (topic id, name and partitions). Each group carries its own error (GROUP_ID_NOT_FOUND for an unknown or
classic group, NOT_COORDINATOR, GROUP_AUTHORIZATION_FAILED...). v1 adds ``member_type`` (KIP-1099: -1 unknown,
0 classic, 1 consumer), the protocol the member joined with. ``Assignment`` is one struct under two fields."""

from ..schema import declare_api

API = declare_api(
    69,
    "ConsumerGroupDescribe",
    versions="0-1",
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
            instance_id            string?     default=null
            rack_id                string?     default=null
            member_epoch           int32
            client_id              string
            client_host            string
            subscribed_topic_names []string
            subscribed_topic_regex string?     default=null
            assignment             Assignment
              topic_partitions     []TopicPartitions
                topic_id           uuid
                topic_name         string
                partitions         []int32
            target_assignment      Assignment
              topic_partitions     []TopicPartitions
                topic_id           uuid
                topic_name         string
                partitions         []int32
            member_type            int8        v1+ default=-1
          authorized_operations    int32       default=-2147483648
    """,
)
