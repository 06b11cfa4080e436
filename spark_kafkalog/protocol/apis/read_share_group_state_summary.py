"""ReadShareGroupStateSummary (key 87), v0-1, flexible (KIP-932; group coordinator to share coordinator).
The summary of a share-partition's persisted state, without its batches: state epoch, leader epoch and start
offset (SPSO), for DescribeShareGroupOffsets. v1 adds ``delivery_complete_count`` (-1: unknown), from which lag is
computed. Errors per partition.
"""

from ..schema import declare_api

API = declare_api(
    87,
    "ReadShareGroupStateSummary",
    versions="0-1",
    flexible="0+",
    request="""
        group_id                   string
        topics                     []ReadStateSummaryData
          topic_id                 uuid
          partitions               []PartitionData
            partition              int32
            leader_epoch           int32
    """,
    response="""
        results                    []ReadStateSummaryResult
          topic_id                 uuid
          partitions               []PartitionResult
            partition              int32
            error_code             int16
            error_message          string?     default=null
            state_epoch            int32
            leader_epoch           int32
            start_offset           int64
            delivery_complete_count  int32     v1+ default=-1
    """,
)
