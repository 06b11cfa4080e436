"""WriteTxnMarkers (key 27), v0-1; flexible from v1. Broker to broker: the transaction coordinator asks
partition leaders to append COMMIT (``transaction_result`` true) or ABORT markers."""

from ..schema import declare_api

API = declare_api(
    27,
    "WriteTxnMarkers",
    versions="0-1",
    flexible="1+",
    request="""
        markers                    []WritableTxnMarker
          producer_id              int64
          producer_epoch           int16
          transaction_result       bool
          topics                   []WritableTxnMarkerTopic
            name                   string
            partition_indexes      []int32
          coordinator_epoch        int32
    """,
    response="""
        markers                    []WritableTxnMarkerResult
          producer_id              int64
          topics                   []WritableTxnMarkerTopicResult
            name                   string
            partitions             []WritableTxnMarkerPartitionResult
              partition_index      int32
              error_code           int16
    """,
)
