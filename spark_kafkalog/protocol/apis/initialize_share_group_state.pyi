# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class InitializeShareGroupStateRequest(Message):
    class InitializeStateData(Message):
        class PartitionData(Message):
            partition: int
            state_epoch: int
            start_offset: int
            def __init__(
                self,
                *,
                partition: int = ...,
                state_epoch: int = ...,
                start_offset: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
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
    topics: list[InitializeStateData]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[InitializeStateData] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class InitializeShareGroupStateResponse(Message):
    class InitializeStateResult(Message):
        class PartitionResult(Message):
            partition: int
            error_code: int
            error_message: str | None
            def __init__(
                self,
                *,
                partition: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
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

    results: list[InitializeStateResult]
    def __init__(
        self, *, results: list[InitializeStateResult] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[InitializeShareGroupStateRequest, InitializeShareGroupStateResponse]
