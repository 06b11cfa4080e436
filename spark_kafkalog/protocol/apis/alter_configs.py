"""AlterConfigs (key 33), v0-2; flexible from v2. Replaces a resource's whole config set (no per-key operation)."""

from ..schema import declare_api

API = declare_api(
    33,
    "AlterConfigs",
    versions="0-2",
    flexible="2+",
    request="""
        resources                  []AlterConfigsResource
          resource_type            int8
          resource_name            string
          configs                  []AlterableConfig
            name                   string
            value                  string?
        validate_only              bool
    """,
    response="""
        throttle_time_ms           int32
        responses                  []AlterConfigsResourceResponse
          error_code               int16
          error_message            string?
          resource_type            int8
          resource_name            string
    """,
)
