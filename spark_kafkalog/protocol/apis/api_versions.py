"""ApiVersions (key 18), v0-4; flexible from v3, but the response header is always v0 (KIP-511)."""

from ..schema import declare_api

API = declare_api(
    18,
    "ApiVersions",
    versions="0-4",
    flexible="3+",
    request="""
        client_software_name       string      v3+
        client_software_version    string      v3+
    """,
    response="""
        error_code                 int16
        api_keys                   []ApiVersion
          api_key                  int16
          min_version              int16
          max_version              int16
        throttle_time_ms           int32       v1+
        supported_features         []SupportedFeatureKey   v3+ tag0
          name                     string
          min_version              int16
          max_version              int16
        finalized_features_epoch   int64       v3+ tag1 default=-1
        finalized_features         []FinalizedFeatureKey   v3+ tag2
          name                     string
          max_version_level        int16
          min_version_level        int16
        zk_migration_ready         bool        v3+ tag3 default=false
    """,
)
