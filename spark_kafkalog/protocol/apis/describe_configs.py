"""DescribeConfigs (key 32), v0-4; flexible from v4.
v0 reports is_default, v1+ config_source and synonyms instead; v3+ config type and documentation."""

from ..schema import declare_api

API = declare_api(
    32,
    "DescribeConfigs",
    versions="0-4",
    flexible="4+",
    request="""
        resources                  []DescribeConfigsResource
          resource_type            int8
          resource_name            string
          configuration_keys       []string?
        include_synonyms           bool        v1+ default=false
        include_documentation      bool        v3+ default=false
    """,
    response="""
        throttle_time_ms           int32
        results                    []DescribeConfigsResult
          error_code               int16
          error_message            string?
          resource_type            int8
          resource_name            string
          configs                  []DescribeConfigsResourceResult
            name                   string
            value                  string?
            read_only              bool
            is_default             bool        v0
            config_source          int8        v1+ default=-1
            is_sensitive           bool
            synonyms               []DescribeConfigsSynonym  v1+
              name                 string
              value                string?
              source               int8
            config_type            int8        v3+ default=0
            documentation          string?     v3+
    """,
)
