# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ReadShareGroupStateSummaryRequest(Message):
    class ReadStateSummaryData(Message):
        class PartitionData(Message):
            partition: int
            leader_epoch: int
            def __init__(
                self, *, partition: int = ..., leader_epoch: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        topic_id: UUID
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_id: UUID = ...,
            partitions: list[PartitionData] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str
    topics: list[ReadStateSummaryData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[ReadStateSummaryData] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ReadShareGroupStateSummaryResponse(Message):
    class ReadStateSummaryResult(Message):
        class PartitionResult(Message):
            partition: int
            error_code: int
            error_message: str | None
            state_epoch: int
            leader_epoch: int
            start_offset: int
            delivery_complete_count: int  # v1+
            def __init__(
                self,
                *,
                partition: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                state_epoch: int = ...,
                leader_epoch: int = ...,
                start_offset: int = ...,
                delivery_complete_count: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic_id: UUID
        partitions: list[PartitionResult]
        def __init__(
            self,
            *,
            topic_id: UUID = ...,
            partitions: list[PartitionResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    results: list[ReadStateSummaryResult]
    def __init__(
        self, *, results: list[ReadStateSummaryResult] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse]
