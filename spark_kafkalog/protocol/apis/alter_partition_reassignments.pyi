# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class AlterPartitionReassignmentsRequest(Message):
    class ReassignableTopic(Message):
        class ReassignablePartition(Message):
            partition_index: int
            replicas: list[int] | None
            def __init__(
                self,
                *,
                partition_index: int = ...,
                replicas: list[int] | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[ReassignablePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ReassignablePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    timeout_ms: int
    allow_replication_factor_change: bool  # v1+
    topics: list[ReassignableTopic]
    def __init__(
        self,
        *,
        timeout_ms: int = ...,
        allow_replication_factor_change: bool = ...,
        topics: list[ReassignableTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AlterPartitionReassignmentsResponse(Message):
    class ReassignableTopicResponse(Message):
        class ReassignablePartitionResponse(Message):
            partition_index: int
            error_code: int
            error_message: str | None
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[ReassignablePartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ReassignablePartitionResponse] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    allow_replication_factor_change: bool  # v1+
    error_code: int
    error_message: str | None
    responses: list[ReassignableTopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        allow_replication_factor_change: bool = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[ReassignableTopicResponse] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse]
