"""SyncGroup (key 14), v0-5; flexible from v4.
v3+ static membership (group_instance_id); v5+ carries protocol_type/protocol_name both ways."""

from ..schema import declare_api

API = declare_api(
    14,
    "SyncGroup",
    versions="0-5",
    flexible="4+",
    request="""
        group_id                   string
        generation_id              int32
        member_id                  string
        group_instance_id          string?     v3+ default=null
        protocol_type              string?     v5+ default=null
        protocol_name              string?     v5+ default=null
        assignments                []SyncGroupRequestAssignment
          member_id                string
          assignment               bytes
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16
        protocol_type              string?     v5+ default=null
        protocol_name              string?     v5+ default=null
        assignment                 bytes
    """,
)
