"""WriteShareGroupState (key 85), v0-1, flexible (KIP-932; share-partition leader to share coordinator).
Writes a share-partition's state: the start offset (SPSO) and the in-flight state batches that changed. A write
with an older ``state_epoch`` than the stored one is FENCED_STATE_EPOCH; an older ``leader_epoch``
FENCED_LEADER_EPOCH. v1 adds ``delivery_complete_count`` (-1: unknown), the count of finished records past the
start offset, used for lag. Errors per partition.
"""

from ..schema import declare_api

API = declare_api(
    85,
    "WriteShareGroupState",
    versions="0-1",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []WriteStateData
          topic_id                 uuid
          partitions               []PartitionData
            partition              int32
            state_epoch            int32
            leader_epoch           int32
            start_offset           int64
            delivery_complete_count  int32     v1+ default=-1
            state_batches          []StateBatch
              first_offset         int64
              last_offset          int64
              delivery_state       int8
              delivery_count       int16
    """,
    response="""
        results                    []WriteStateResult
          topic_id                 uuid
          partitions               []PartitionResult
            partition              int32
            error_code             int16
            error_message          string?     default=null
    """,
)
