"""ElectLeaders (key 43), v0-2; flexible from v2 (KIP-183, KIP-460). Elects partition leaders on the controller:
v1 adds ``election_type`` (0 preferred replica, 1 unclean: the first live replica when no in-sync replica is
live) and the top-level error code. A null topic list asks for every partition."""

from ..schema import declare_api

API = declare_api(
    43,
    "ElectLeaders",
    versions="0-2",
    flexible="2+",
    request="""
        election_type              int8        v1+
        topic_partitions           []TopicPartitions?
          topic                    string
          partitions               []int32
        timeout_ms                 int32       default=60000
    """,
    response="""
        throttle_time_ms           int32
        error_code                 int16       v1+
        replica_election_results   []ReplicaElectionResult
          topic                    string
          partition_result         []PartitionResult
            partition_id           int32
            error_code             int16
            error_message          string?
    """,
)
