"""CreateTopics (key 19), v0-7; flexible from v5.
v5+ results echo partitions, replication factor and configs (config error under tag 0); v7+ topic ids."""

from ..schema import declare_api

API = declare_api(
    19,
    "CreateTopics",
    versions="0-7",
    flexible="5+",
    request="""
        topics                     []CreatableTopic
          name                     string
          num_partitions           int32
          replication_factor       int16
          assignments              []CreatableReplicaAssignment
            partition_index        int32
            broker_ids             []int32
          configs                  []CreatableTopicConfig
            name                   string
            value                  string?
        timeout_ms                 int32       default=60000
        validate_only              bool        v1+ default=false
    """,
    response="""
        throttle_time_ms           int32       v2+
        topics                     []CreatableTopicResult
          name                     string
          topic_id                 uuid        v7+
          error_code               int16
          error_message            string?     v1+
          topic_config_error_code  int16       v5+ tag0
          num_partitions           int32       v5+ default=-1
          replication_factor       int16       v5+ default=-1
          configs                  []CreatableTopicConfigs  v5+ null5+
            name                   string
            value                  string?
            read_only              bool
            config_source          int8        default=-1
            is_sensitive           bool
    """,
)
