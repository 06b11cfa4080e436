"""JoinGroup (key 11), v0-9; flexible from v6.
v0 has no rebalance timeout; v5+ static membership (group_instance_id); v7+ echoes protocol_type;
v8+ a ``reason`` for the join (KIP-800); v9 answers ``skip_assignment`` (KIP-814, for the leader)."""

from ..schema import declare_api

API = declare_api(
    11,
    "JoinGroup",
    versions="0-9",
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
        reason                     string?     v8+ default=null
    """,
    response="""
        throttle_time_ms           int32       v2+
        error_code                 int16
        generation_id              int32       default=-1
        protocol_type              string?     v7+ default=null
        protocol_name              string      null7+
        leader                     string
        skip_assignment            bool        v9+ default=false
        member_id                  string
        members                    []JoinGroupResponseMember
          member_id                string
          group_instance_id        string?     v5+ default=null
          metadata                 bytes
    """,
)
