# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ElectLeadersRequest(Message):
    class TopicPartitions(Message):
        topic: str
        partitions: list[int]
        def __init__(
            self, *, topic: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    election_type: int  # v1+
    topic_partitions: list[TopicPartitions] | None
    timeout_ms: int
    def __init__(
        self,
        *,
        election_type: int = ...,
        topic_partitions: list[TopicPartitions] | None = ...,
        timeout_ms: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ElectLeadersResponse(Message):
    class ReplicaElectionResult(Message):
        class PartitionResult(Message):
            partition_id: int
            error_code: int
            error_message: str | None
            def __init__(
                self,
                *,
                partition_id: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic: str
        partition_result: list[PartitionResult]
        def __init__(
            self,
            *,
            topic: str = ...,
            partition_result: list[PartitionResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # v1+
    replica_election_results: list[ReplicaElectionResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        replica_election_results: list[ReplicaElectionResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ElectLeadersRequest, ElectLeadersResponse]
