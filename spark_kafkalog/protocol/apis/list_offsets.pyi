# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class ListOffsetsRequest(Message):
    class ListOffsetsTopic(Message):
        class ListOffsetsPartition(Message):
            partition_index: int
            current_leader_epoch: int  # v4+
            timestamp: int
            max_num_offsets: int  # v0
            def __init__(
                self,
                *,
                partition_index: int = ...,
                current_leader_epoch: int = ...,
                timestamp: int = ...,
                max_num_offsets: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[ListOffsetsPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    replica_id: int
    isolation_level: int  # v2+
    topics: list[ListOffsetsTopic]
    timeout_ms: int  # v10+
    def __init__(
        self,
        *,
        replica_id: int = ...,
        isolation_level: int = ...,
        topics: list[ListOffsetsTopic] = ...,
        timeout_ms: int = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class ListOffsetsResponse(Message):
    class ListOffsetsTopicResponse(Message):
        class ListOffsetsPartitionResponse(Message):
            partition_index: int
            error_code: int
            old_style_offsets: list[int]  # v0
            timestamp: int  # v1+
            offset: int  # v1+
            leader_epoch: int  # v4+
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                old_style_offsets: list[int] = ...,
                timestamp: int = ...,
                offset: int = ...,
                leader_epoch: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[ListOffsetsPartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsPartitionResponse] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v2+
    topics: list[ListOffsetsTopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[ListOffsetsTopicResponse] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[ListOffsetsRequest, ListOffsetsResponse]
