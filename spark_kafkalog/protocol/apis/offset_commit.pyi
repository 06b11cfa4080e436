# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class OffsetCommitRequest(Message):
    class OffsetCommitRequestTopic(Message):
        class OffsetCommitRequestPartition(Message):
            partition_index: int
            committed_offset: int
            committed_leader_epoch: int  # v6+
            commit_timestamp: int  # v1
            committed_metadata: str | None
            def __init__(
                self,
                *,
                partition_index: int = ...,
                committed_offset: int = ...,
                committed_leader_epoch: int = ...,
                commit_timestamp: int = ...,
                committed_metadata: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str  # v0-9
        topic_id: UUID  # v10+
        partitions: list[OffsetCommitRequestPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partitions: list[OffsetCommitRequestPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str
    generation_id_or_member_epoch: int  # v1+
    member_id: str  # v1+
    group_instance_id: str | None  # v7+
    retention_time_ms: int  # v2-4
    topics: list[OffsetCommitRequestTopic]
    def __init__(
        self,
        *,
        group_id: str = ...,
        generation_id_or_member_epoch: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        retention_time_ms: int = ...,
        topics: list[OffsetCommitRequestTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class OffsetCommitResponse(Message):
    class OffsetCommitResponseTopic(Message):
        class OffsetCommitResponsePartition(Message):
            partition_index: int
            error_code: int
            def __init__(
                self, *, partition_index: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str  # v0-9
        topic_id: UUID  # v10+
        partitions: list[OffsetCommitResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partitions: list[OffsetCommitResponsePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v3+
    topics: list[OffsetCommitResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetCommitResponseTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[OffsetCommitRequest, OffsetCommitResponse]
