# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class ReadShareGroupStateRequest(Message):
    class ReadStateData(Message):
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
    topics: list[ReadStateData]
    def __init__(
        self, *, group_id: str = ..., topics: list[ReadStateData] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class ReadShareGroupStateResponse(Message):
    class ReadStateResult(Message):
        class PartitionResult(Message):
            class StateBatch(Message):
                first_offset: int
                last_offset: int
                delivery_state: int
                delivery_count: int
                def __init__(
                    self,
                    *,
                    first_offset: int = ...,
                    last_offset: int = ...,
                    delivery_state: int = ...,
                    delivery_count: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            partition: int
            error_code: int
            error_message: str | None
            state_epoch: int
            start_offset: int
            state_batches: list[StateBatch]
            def __init__(
                self,
                *,
                partition: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                state_epoch: int = ...,
                start_offset: int = ...,
                state_batches: list[StateBatch] = ...,
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

    results: list[ReadStateResult]
    def __init__(
        self, *, results: list[ReadStateResult] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[ReadShareGroupStateRequest, ReadShareGroupStateResponse]
