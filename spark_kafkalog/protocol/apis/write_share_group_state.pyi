# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class WriteShareGroupStateRequest(Message):
    class WriteStateData(Message):
        class PartitionData(Message):
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
            state_epoch: int
            leader_epoch: int
            start_offset: int
            delivery_complete_count: int  # v1+
            state_batches: list[StateBatch]
            def __init__(
                self,
                *,
                partition: int = ...,
                state_epoch: int = ...,
                leader_epoch: int = ...,
                start_offset: int = ...,
                delivery_complete_count: int = ...,
                state_batches: list[StateBatch] = ...,
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
    topics: list[WriteStateData]
    def __init__(
        self, *, group_id: str = ..., topics: list[WriteStateData] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class WriteShareGroupStateResponse(Message):
    class WriteStateResult(Message):
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

    results: list[WriteStateResult]
    def __init__(
        self, *, results: list[WriteStateResult] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

API: ApiSpec[WriteShareGroupStateRequest, WriteShareGroupStateResponse]
