"""AddPartitionsToTxn (key 24), v0-5; flexible from v3 (v5 only adds TRANSACTION_ABORTABLE).
v0-3: one transaction (a producer's own request); v4+ batch transactions (sent by brokers, KIP-890) with a
top-level error code and ``verify_only``."""

from ..schema import declare_api

API = declare_api(
    24,
    "AddPartitionsToTxn",
    versions="0-5",
    flexible="3+",
    request="""
        transactions               []AddPartitionsToTxnTransaction  v4+
          transactional_id         string
          producer_id              int64
          producer_epoch           int16
          verify_only              bool        default=false
          topics                   []AddPartitionsToTxnTopic
            name                   string
            partitions             []int32
        v3_and_below_transactional_id  string  v0-3
        v3_and_below_producer_id   int64       v0-3
        v3_and_below_producer_epoch  int16     v0-3
        v3_and_below_topics        []AddPartitionsToTxnTopic  v0-3
          name                     string
          partitions               []int32
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16       v4+
        results_by_transaction     []AddPartitionsToTxnResult  v4+
          transactional_id         string
          topic_results            []AddPartitionsToTxnTopicResult
            name                   string
            results_by_partition   []AddPartitionsToTxnPartitionResult
              partition_index      int32
              partition_error_code  int16
        results_by_topic_v3_and_below  []AddPartitionsToTxnTopicResult  v0-3
          name                     string
          results_by_partition     []AddPartitionsToTxnPartitionResult
            partition_index        int32
            partition_error_code   int16
    """,
)
