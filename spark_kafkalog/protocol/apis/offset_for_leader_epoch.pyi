# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from ..schema import ApiSpec, Message

class OffsetForLeaderEpochRequest(Message):
    class OffsetForLeaderTopic(Message):
        class OffsetForLeaderPartition(Message):
            partition: int
            current_leader_epoch: int  # v2+
            leader_epoch: int
            def __init__(
                self,
                *,
                partition: int = ...,
                current_leader_epoch: int = ...,
                leader_epoch: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic: str
        partitions: list[OffsetForLeaderPartition]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: list[OffsetForLeaderPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    replica_id: int  # v3+
    topics: list[OffsetForLeaderTopic]
    def __init__(
        self,
        *,
        replica_id: int = ...,
        topics: list[OffsetForLeaderTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class OffsetForLeaderEpochResponse(Message):
    class OffsetForLeaderTopicResult(Message):
        class EpochEndOffset(Message):
            error_code: int
            partition: int
            leader_epoch: int  # v1+
            end_offset: int
            def __init__(
                self,
                *,
                error_code: int = ...,
                partition: int = ...,
                leader_epoch: int = ...,
                end_offset: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        topic: str
        partitions: list[EpochEndOffset]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: list[EpochEndOffset] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v2+
    topics: list[OffsetForLeaderTopicResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetForLeaderTopicResult] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse]
