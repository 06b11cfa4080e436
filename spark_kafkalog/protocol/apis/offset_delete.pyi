# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class OffsetDeleteRequest(Message):
    class OffsetDeleteRequestTopic(Message):
        class OffsetDeleteRequestPartition(Message):
            partition_index: int
            def __init__(self, *, partition_index: int = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

        name: str
        partitions: list[OffsetDeleteRequestPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetDeleteRequestPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str
    topics: list[OffsetDeleteRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[OffsetDeleteRequestTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class OffsetDeleteResponse(Message):
    class OffsetDeleteResponseTopic(Message):
        class OffsetDeleteResponsePartition(Message):
            partition_index: int
            error_code: int
            def __init__(
                self, *, partition_index: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str
        partitions: list[OffsetDeleteResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetDeleteResponsePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    error_code: int
    throttle_time_ms: int
    topics: list[OffsetDeleteResponseTopic]
    def __init__(
        self,
        *,
        error_code: int = ...,
        throttle_time_ms: int = ...,
        topics: list[OffsetDeleteResponseTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[OffsetDeleteRequest, OffsetDeleteResponse]
