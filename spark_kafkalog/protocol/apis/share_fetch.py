"""ShareFetch (key 78), v1-2, flexible (KIP-932).
A share-group member's fetch through its share session (keyed by group and member): ``share_session_epoch`` 0
opens the session, -1 closes it (releasing the member's acquired records), any other value is the previous one
plus 1. ``acknowledgement_batches`` acknowledge earlier deliveries first (``acknowledge_types``: one per batch or
one per offset; 0 gap, 1 accept, 2 release, 3 reject, 4 renew). The response holds, per partition, the record
batches containing the acquired offsets (``records``, whole batches as in Fetch), the ``acquired_records`` ranges
with their delivery counts and the lock timeout for them (``acquisition_lock_timeout_ms``). v2 adds
``share_acquire_mode`` (0 batch-optimized, 1 record-limit) and ``is_renew_ack`` (KIP-1222). v0 is not served:
Kafka 4.4 dropped it.
"""

from ..schema import declare_api

API = declare_api(
    78,
    "ShareFetch",
    versions="1-2",
    flexible="0+",
    request="""
        group_id                   string?     default=null
        member_id                  string?
        share_session_epoch        int32
        max_wait_ms                int32
        min_bytes                  int32
        max_bytes                  int32       default=0x7fffffff
        max_records                int32
        batch_size                 int32
        share_acquire_mode         int8        v2+ default=0
        is_renew_ack               bool        v2+ default=false
        topics                     []FetchTopic
          topic_id                 uuid
          partitions               []FetchPartition
            partition_index        int32
            acknowledgement_batches  []AcknowledgementBatch
              first_offset         int64
              last_offset          int64
              acknowledge_types    []int8
        forgotten_topics_data      []ForgottenTopic
          topic_id                 uuid
          partitions               []int32
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        acquisition_lock_timeout_ms  int32
        responses                  []ShareFetchableTopicResponse
          topic_id                 uuid
          partitions               []PartitionData
            partition_index        int32
            error_code             int16
            error_message          string?     default=null
            acknowledge_error_code int16
            acknowledge_error_message  string?  default=null
            current_leader         LeaderIdAndEpoch
              leader_id            int32
              leader_epoch         int32
            records                records
            acquired_records       []AcquiredRecords
              first_offset         int64
              last_offset          int64
              delivery_count       int16
        node_endpoints             []NodeEndpoint
          node_id                  int32
          host                     string
          port                     int32
          rack                     string?     default=null
    """,
)
