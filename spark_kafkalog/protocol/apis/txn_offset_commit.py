"""TxnOffsetCommit (key 28), v0-6; flexible from v3. Offsets committed within a transaction; v2+ carry the
leader epoch, v3+ the member's generation, id and instance id (KIP-447); v4 adds TRANSACTION_ABORTABLE; v5
(transactions v2) adds the group's ``__consumer_offsets`` partition to the transaction implicitly; v6 names topics by id
instead of by name and may answer GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH (KIP-1319; Kafka 4.4 renames
``generation_id`` to GenerationIdOrMemberEpoch, the same field)."""

from ..schema import declare_api

API = declare_api(
    28,
    "TxnOffsetCommit",
    versions="0-6",
    flexible="3+",
    request="""
        transactional_id           string
        group_id                   string
        producer_id                int64
        producer_epoch             int16
        generation_id              int32       v3+ default=-1
        member_id                  string      v3+ default=
        group_instance_id          string?     v3+ default=null
        topics                     []TxnOffsetCommitRequestTopic
          name                     string      v0-5
          topic_id                 uuid        v6+
          partitions               []TxnOffsetCommitRequestPartition
            partition_index        int32
            committed_offset       int64
            committed_leader_epoch  int32      v2+ default=-1
            committed_metadata     string?
    """,
    response="""
        throttle_time_ms           int32
        topics                     []TxnOffsetCommitResponseTopic
          name                     string      v0-5
          topic_id                 uuid        v6+
          partitions               []TxnOffsetCommitResponsePartition
            partition_index        int32
            error_code             int16
    """,
)
