# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class TxnOffsetCommitRequest(Message):
    class TxnOffsetCommitRequestTopic(Message):
        class TxnOffsetCommitRequestPartition(Message):
            partition_index: int
            committed_offset: int
            committed_leader_epoch: int  # v2+
            committed_metadata: str | None
            def __init__(
                self,
                *,
                partition_index: int = ...,
                committed_offset: int = ...,
                committed_leader_epoch: int = ...,
                committed_metadata: str | None = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str  # v0-5
        topic_id: UUID  # v6+
        partitions: list[TxnOffsetCommitRequestPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partitions: list[TxnOffsetCommitRequestPartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    generation_id: int  # v3+
    member_id: str  # v3+
    group_instance_id: str | None  # v3+
    topics: list[TxnOffsetCommitRequestTopic]
    def __init__(
        self,
        *,
        transactional_id: str = ...,
        group_id: str = ...,
        producer_id: int = ...,
        producer_epoch: int = ...,
        generation_id: int = ...,
        member_id: str = ...,
        group_instance_id: str | None = ...,
        topics: list[TxnOffsetCommitRequestTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class TxnOffsetCommitResponse(Message):
    class TxnOffsetCommitResponseTopic(Message):
        class TxnOffsetCommitResponsePartition(Message):
            partition_index: int
            error_code: int
            def __init__(
                self, *, partition_index: int = ..., error_code: int = ..., unknown_tags: dict[int, bytes] | None = ...
            ) -> None: ...

        name: str  # v0-5
        topic_id: UUID  # v6+
        partitions: list[TxnOffsetCommitResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            topic_id: UUID = ...,
            partitions: list[TxnOffsetCommitResponsePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[TxnOffsetCommitResponseTopic]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[TxnOffsetCommitResponseTopic] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[TxnOffsetCommitRequest, TxnOffsetCommitResponse]
