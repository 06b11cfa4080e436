# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DeleteRecordsRequest(Message):
    class DeleteRecordsTopic(Message):
        class DeleteRecordsPartition(Message):
            partition_index: int
            offset: int
            def __init__(
                self, *, partition_index: int = ..., offset: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str
        partitions: list[DeleteRecordsPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DeleteRecordsPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    topics: list[DeleteRecordsTopic]
    timeout_ms: int
    def __init__(
        self,
        *,
        topics: list[DeleteRecordsTopic] = ...,
        timeout_ms: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DeleteRecordsResponse(Message):
    class DeleteRecordsTopicResult(Message):
        class DeleteRecordsPartitionResult(Message):
            partition_index: int
            low_watermark: int
            error_code: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                low_watermark: int = ...,
                error_code: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[DeleteRecordsPartitionResult]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[DeleteRecordsPartitionResult] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DeleteRecordsTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DeleteRecordsTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DeleteRecordsRequest, DeleteRecordsResponse]
