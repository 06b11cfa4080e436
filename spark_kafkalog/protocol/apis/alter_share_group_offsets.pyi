# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class AlterShareGroupOffsetsRequest(Message):
    class AlterShareGroupOffsetsRequestTopic(Message):
        class AlterShareGroupOffsetsRequestPartition(Message):
            partition_index: int
            start_offset: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                start_offset: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic_name: str
        partitions: list[AlterShareGroupOffsetsRequestPartition]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[AlterShareGroupOffsetsRequestPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str
    topics: list[AlterShareGroupOffsetsRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[AlterShareGroupOffsetsRequestTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class AlterShareGroupOffsetsResponse(Message):
    class AlterShareGroupOffsetsResponseTopic(Message):
        class AlterShareGroupOffsetsResponsePartition(Message):
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

        topic_name: str
        topic_id: UUID
        partitions: list[AlterShareGroupOffsetsResponsePartition]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            topic_id: UUID = ...,
            partitions: list[AlterShareGroupOffsetsResponsePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    responses: list[AlterShareGroupOffsetsResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        error_message: str | None = ...,
        responses: list[AlterShareGroupOffsetsResponseTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse]
