"""ReadShareGroupState (key 84), v0, flexible (KIP-932; share-partition leader to share coordinator).
Reads a share-partition's persisted state: state epoch, start offset (SPSO) and the in-flight state batches
(``delivery_state``: 0 available, 2 acknowledged, 4 archived; acquired records are persisted as available).
``leader_epoch`` fences reads from an older leader (FENCED_LEADER_EPOCH). Errors per partition.
"""

from ..schema import declare_api

API = declare_api(
    84,
    "ReadShareGroupState",
    versions="0",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []ReadStateData
          topic_id                 uuid
          partitions               []PartitionData
            partition              int32
            leader_epoch           int32
    """,
    response="""
        results                    []ReadStateResult
          topic_id                 uuid
          partitions               []PartitionResult
            partition              int32
            error_code             int16
            error_message          string?     default=null
            state_epoch            int32
            start_offset           int64
            state_batches          []StateBatch
              first_offset         int64
              last_offset          int64
              delivery_state       int8
              delivery_count       int16
    """,
)
