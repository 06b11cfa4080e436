"""DeleteShareGroupState (key 86), v0, flexible (KIP-932; group coordinator to share coordinator).
Deletes the persisted state of share-partitions (group deletion, DeleteShareGroupOffsets). Errors per partition.
"""

from ..schema import declare_api

API = declare_api(
    86,
    "DeleteShareGroupState",
    versions="0",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []DeleteStateData
          topic_id                 uuid
          partitions               []PartitionData
            partition              int32
    """,
    response="""
        results                    []DeleteStateResult
          topic_id                 uuid
          partitions               []PartitionResult
            partition              int32
            error_code             int16
            error_message          string?     default=null
    """,
)
