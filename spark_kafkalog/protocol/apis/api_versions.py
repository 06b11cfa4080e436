"""ApiVersions (key 18), v0-5; flexible from v3, but the response header is always v0 (KIP-511). v5 carries the
cluster id and node id the client means to reach (KIP-1242: REBOOTSTRAP_REQUIRED when they are not this broker's)."""

from ..schema import declare_api

API = declare_api(
    18,
    "ApiVersions",
    versions="0-5",
    flexible="3+",
    request="""
        client_software_name       string      v3+
        client_software_version    string      v3+
        cluster_id                 string?     v5+ default=null
        node_id                    int32       v5+ default=-1
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
