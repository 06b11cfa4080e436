"""JoinGroup (key 11), v0-7; flexible from v6.
v0 has no rebalance timeout; v5+ static membership (group_instance_id); v7+ echoes protocol_type."""

from ..schema import declare_api

API = declare_api(
    11,
    "JoinGroup",
    versions="0-7",
    flexible="6+",
    request="""
        group_id                   string
        session_timeout_ms         int32
        rebalance_timeout_ms       int32       v1+ default=-1
        member_id                  string
        group_instance_id          string?     v5+ default=null
        protocol_type              string
        protocols                  []JoinGroupRequestProtocol
          name                     string
          metadata                 bytes
    """,
    response="""
        throttle_time_ms           int32       v2+
        error_code                 int16
        generation_id              int32       default=-1
        protocol_type              string?     v7+ default=null
        protocol_name              string      null7+
        leader                     string
        member_id                  string
        members                    []JoinGroupResponseMember
          member_id                string
          group_instance_id        string?     v5+ default=null
          metadata                 bytes
    """,
)
