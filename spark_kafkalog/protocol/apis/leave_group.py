"""LeaveGroup (key 13), v0-5; flexible from v4.
v0-2 remove one member_id; v3+ a batch of members with per-member results; v5+ a reason per member."""

from ..schema import declare_api

API = declare_api(
    13,
    "LeaveGroup",
    versions="0-5",
    flexible="4+",
    request="""
        group_id                   string
        member_id                  string      v0-2
        members                    []MemberIdentity  v3+
          member_id                string
          group_instance_id        string?     default=null
          reason                   string?     v5+ default=null
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16
        members                    []MemberResponse  v3+
          member_id                string
          group_instance_id        string?
          error_code               int16
    """,
)
