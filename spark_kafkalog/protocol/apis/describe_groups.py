"""DescribeGroups (key 15), v0-5; flexible from v5.
v3+ may request authorized operations; v4+ members carry group_instance_id."""

from ..schema import declare_api

API = declare_api(
    15,
    "DescribeGroups",
    versions="0-5",
    flexible="5+",
    request="""
        groups                     []string
        include_authorized_operations  bool    v3+
    """,
    response="""
        throttle_time_ms           int32       v1+
        groups                     []DescribedGroup
          error_code               int16
          group_id                 string
          group_state              string
          protocol_type            string
          protocol_data            string
          members                  []DescribedGroupMember
            member_id              string
            group_instance_id      string?     v4+ default=null
            client_id              string
            client_host            string
            member_metadata        bytes
            member_assignment      bytes
          authorized_operations    int32       v3+ default=-2147483648
    """,
)
