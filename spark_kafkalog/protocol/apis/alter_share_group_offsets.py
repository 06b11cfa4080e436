"""AlterShareGroupOffsets (key 91), v0, flexible (KIP-932; admin to group coordinator).
Sets the start offset (SPSO) of share-partitions of an empty share group (NON_EMPTY_GROUP otherwise). Errors for
the whole request and per partition.
"""

from ..schema import declare_api

API = declare_api(
    91,
    "AlterShareGroupOffsets",
    versions="0",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []AlterShareGroupOffsetsRequestTopic
          topic_name               string
          partitions               []AlterShareGroupOffsetsRequestPartition
            partition_index        int32
            start_offset           int64
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        responses                  []AlterShareGroupOffsetsResponseTopic
          topic_name               string
          topic_id                 uuid
          partitions               []AlterShareGroupOffsetsResponsePartition
            partition_index        int32
            error_code             int16
            error_message          string?     default=null
    """,
)
