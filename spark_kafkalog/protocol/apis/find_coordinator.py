"""FindCoordinator (key 10), v0-3; flexible from v3.
v0 finds group coordinators only (no key_type); v4+ (batched keys) is not declared."""

from ..schema import declare_api

API = declare_api(
    10,
    "FindCoordinator",
    versions="0-3",
    flexible="3+",
    request="""
        key                        string
        key_type                   int8        v1+ default=0
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16
        error_message              string?     v1+
        node_id                    int32
        host                       string
        port                       int32
    """,
)
