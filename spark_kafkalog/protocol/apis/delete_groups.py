"""DeleteGroups (key 42), v0-2; flexible from v2."""

from ..schema import declare_api

API = declare_api(
    42,
    "DeleteGroups",
    versions="0-2",
    flexible="2+",
    request="""
        groups_names               []string
    """,
    response="""
        throttle_time_ms           int32
        results                    []DeletableGroupResult
          group_id                 string
          error_code               int16
    """,
)
