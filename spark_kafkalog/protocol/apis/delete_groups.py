"""DeleteGroups (key 42), v0-3; flexible from v2. v3 adds each result's ``error_message``."""

from ..schema import declare_api

API = declare_api(
    42,
    "DeleteGroups",
    versions="0-3",
    flexible="2+",
    request="""
        groups_names               []string
    """,
    response="""
        throttle_time_ms           int32
        results                    []DeletableGroupResult
          group_id                 string
          error_code               int16
          error_message            string?     v3+ default=null
    """,
)
