# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class DescribeShareGroupOffsetsRequest(Message):
    class DescribeShareGroupOffsetsRequestGroup(Message):
        class DescribeShareGroupOffsetsRequestTopic(Message):
            topic_name: str
            partitions: list[int]
            def __init__(
                self, *, topic_name: str = ..., partitions: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        group_id: str
        topics: list[DescribeShareGroupOffsetsRequestTopic] | None
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[DescribeShareGroupOffsetsRequestTopic] | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    groups: list[DescribeShareGroupOffsetsRequestGroup]
    def __init__(
        self, *, groups: list[DescribeShareGroupOffsetsRequestGroup] = ..., unknown_tags: dict[int, bytes] | None = ...
    ) -> None: ...

class DescribeShareGroupOffsetsResponse(Message):
    class DescribeShareGroupOffsetsResponseGroup(Message):
        class DescribeShareGroupOffsetsResponseTopic(Message):
            class DescribeShareGroupOffsetsResponsePartition(Message):
                partition_index: int
                start_offset: int
                leader_epoch: int
                lag: int  # v1+
                error_code: int
                error_message: str | None
                def __init__(
                    self,
                    *,
                    partition_index: int = ...,
                    start_offset: int = ...,
                    leader_epoch: int = ...,
                    lag: int = ...,
                    error_code: int = ...,
                    error_message: str | None = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            topic_name: str
            topic_id: UUID
            partitions: list[DescribeShareGroupOffsetsResponsePartition]
            def __init__(
                self,
                *,
                topic_name: str = ...,
                topic_id: UUID = ...,
                partitions: list[DescribeShareGroupOffsetsResponsePartition] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        group_id: str
        topics: list[DescribeShareGroupOffsetsResponseTopic]
        error_code: int
        error_message: str | None
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[DescribeShareGroupOffsetsResponseTopic] = ...,
            error_code: int = ...,
            error_message: str | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    groups: list[DescribeShareGroupOffsetsResponseGroup]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        groups: list[DescribeShareGroupOffsetsResponseGroup] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse]
