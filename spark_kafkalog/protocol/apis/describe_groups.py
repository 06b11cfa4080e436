"""DescribeGroups (key 15), v0-6; flexible from v5.
v3+ may request authorized operations; v4+ members carry group_instance_id; v6 answers GROUP_ID_NOT_FOUND for
a group that does not exist, with ``error_message`` (KIP-1043)."""

from ..schema import declare_api

API = declare_api(
    15,
    "DescribeGroups",
    versions="0-6",
    flexible="5+",
    request="""
        groups                     []string
        include_authorized_operations  bool    v3+
    """,
    response="""
        throttle_time_ms           int32       v1+
        groups                     []DescribedGroup
          error_code               int16
          error_message            string?     v6+ default=null
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
