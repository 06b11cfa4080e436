"""Heartbeat (key 12), v0-4; flexible from v4. v3+ static membership (group_instance_id)."""

from ..schema import declare_api

API = declare_api(
    12,
    "Heartbeat",
    versions="0-4",
    flexible="4+",
    request="""
        group_id                   string
        generation_id              int32
        member_id                  string
        group_instance_id          string?     v3+ default=null
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16
    """,
)
