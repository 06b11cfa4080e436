# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class DescribeLogDirsRequest(Message):
    class DescribableLogDirTopic(Message):
        topic: str
        partitions: list[int]
        def __init__(
            self, *, topic: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[DescribableLogDirTopic] | None
    def __init__(
        self, *, topics: list[DescribableLogDirTopic] | None = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class DescribeLogDirsResponse(Message):
    class DescribeLogDirsResult(Message):
        class DescribeLogDirsTopic(Message):
            class DescribeLogDirsPartition(Message):
                partition_index: int
                partition_size: int
                offset_lag: int
                is_future_key: bool
                def __init__(
                    self,
                    *,
                    partition_index: int = ...,
                    partition_size: int = ...,
                    offset_lag: int = ...,
                    is_future_key: bool = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            name: str
            partitions: list[DescribeLogDirsPartition]
            def __init__(
                self,
                *,
                name: str = ...,
                partitions: list[DescribeLogDirsPartition] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        log_dir: str
        topics: list[DescribeLogDirsTopic]
        total_bytes: int  # v4+
        usable_bytes: int  # v4+
        is_cordoned: bool  # v5+
        def __init__(
            self,
            *,
            error_code: int = ...,
            log_dir: str = ...,
            topics: list[DescribeLogDirsTopic] = ...,
            total_bytes: int = ...,
            usable_bytes: int = ...,
            is_cordoned: bool = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int  # v3+
    results: list[DescribeLogDirsResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        results: list[DescribeLogDirsResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeLogDirsRequest, DescribeLogDirsResponse]
