"""ShareAcknowledge (key 79), v1-2, flexible (KIP-932).
Acknowledges delivered records of a share session without fetching: the same session epochs and
``acknowledgement_batches`` as ShareFetch (types 0 gap, 1 accept, 2 release, 3 reject, 4 renew); errors per
partition. v2 adds ``is_renew_ack`` and answers ``acquisition_lock_timeout_ms`` (KIP-1222). v0 is not served:
Kafka 4.4 dropped it.
"""

from ..schema import declare_api

API = declare_api(
    79,
    "ShareAcknowledge",
    versions="1-2",
    flexible="0+",
    request="""
        group_id                   string?     default=null
        member_id                  string?
        share_session_epoch        int32
        is_renew_ack               bool        v2+ default=false
        topics                     []AcknowledgeTopic
          topic_id                 uuid
          partitions               []AcknowledgePartition
            partition_index        int32
            acknowledgement_batches  []AcknowledgementBatch
              first_offset         int64
              last_offset          int64
              acknowledge_types    []int8
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16
        error_message              string?     default=null
        acquisition_lock_timeout_ms  int32     v2+
        responses                  []ShareAcknowledgeTopicResponse
          topic_id                 uuid
          partitions               []PartitionData
            partition_index        int32
            error_code             int16
            error_message          string?     default=null
            current_leader         LeaderIdAndEpoch
              leader_id            int32
              leader_epoch         int32
        node_endpoints             []NodeEndpoint
          node_id                  int32
          host                     string
          port                     int32
          rack                     string?     default=null
    """,
)
