"""IncrementalAlterConfigs (key 44), v0-1; flexible from v1.
Each config carries an int8 operation (set, delete, append, subtract)."""

from ..schema import declare_api

API = declare_api(
    44,
    "IncrementalAlterConfigs",
    versions="0-1",
    flexible="1+",
    request="""
        resources                  []AlterConfigsResource
          resource_type            int8
          resource_name            string
          configs                  []AlterableConfig
            name                   string
            config_operation       int8
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
