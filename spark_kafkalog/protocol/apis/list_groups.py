"""ListGroups (key 16), v0-5; flexible from v3. v4+ filters by state, v5+ by group type."""

from ..schema import declare_api

API = declare_api(
    16,
    "ListGroups",
    versions="0-5",
    flexible="3+",
    request="""
        states_filter              []string    v4+
        types_filter               []string    v5+
    """,
    response="""
        throttle_time_ms           int32       v1+
        error_code                 int16
        groups                     []ListedGroup
          group_id                 string
          protocol_type            string
          group_state              string      v4+
          group_type               string      v5+
    """,
)
