"""InitializeShareGroupState (key 83), v0, flexible (KIP-932; broker to share coordinator).
Creates or resets the persisted state of share-partitions: per (group, topic id, partition) a new
``state_epoch`` and ``start_offset`` (-1: not chosen yet, resolved from share.auto.offset.reset when the
partition's leader loads it), with no in-flight batches. Errors per partition.
"""

from ..schema import declare_api

API = declare_api(
    83,
    "InitializeShareGroupState",
    versions="0",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []InitializeStateData
          topic_id                 uuid
          partitions               []PartitionData
            partition              int32
            state_epoch            int32
            start_offset           int64
    """,
    response="""
        results                    []InitializeStateResult
          topic_id                 uuid
          partitions               []PartitionResult
            partition              int32
            error_code             int16
            error_message          string?     default=null
    """,
)
