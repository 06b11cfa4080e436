# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class OffsetFetchRequest(Message):
    class OffsetFetchRequestTopic(Message):
        name: str
        partition_indexes: list[int]
        def __init__(
            self, *, name: str = ..., partition_indexes: list[int] = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    class OffsetFetchRequestGroup(Message):
        class OffsetFetchRequestTopics(Message):
            name: str  # v8-9
            topic_id: UUID  # v10+
            partition_indexes: list[int]
            def __init__(
                self,
                *,
                name: str = ...,
                topic_id: UUID = ...,
                partition_indexes: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        group_id: str
        member_id: str | None  # v9+
        member_epoch: int  # v9+
        topics: list[OffsetFetchRequestTopics] | None
        def __init__(
            self,
            *,
            group_id: str = ...,
            member_id: str | None = ...,
            member_epoch: int = ...,
            topics: list[OffsetFetchRequestTopics] | None = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    group_id: str  # v0-7
    topics: list[OffsetFetchRequestTopic] | None  # v0-7, null v2-7
    groups: list[OffsetFetchRequestGroup]  # v8+
    require_stable: bool  # v7+
    def __init__(
        self,
        *,
        group_id: str = ...,
        topics: list[OffsetFetchRequestTopic] | None = ...,
        groups: list[OffsetFetchRequestGroup] = ...,
        require_stable: bool = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class OffsetFetchResponse(Message):
    class OffsetFetchResponseTopic(Message):
        class OffsetFetchResponsePartition(Message):
            partition_index: int
            committed_offset: int
            committed_leader_epoch: int  # v5+
            metadata: str | None
            error_code: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                committed_offset: int = ...,
                committed_leader_epoch: int = ...,
                metadata: str | None = ...,
                error_code: int = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        name: str
        partitions: list[OffsetFetchResponsePartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[OffsetFetchResponsePartition] = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class OffsetFetchResponseGroup(Message):
        class OffsetFetchResponseTopics(Message):
            class OffsetFetchResponsePartitions(Message):
                partition_index: int
                committed_offset: int
                committed_leader_epoch: int
                metadata: str | None
                error_code: int
                def __init__(
                    self,
                    *,
                    partition_index: int = ...,
                    committed_offset: int = ...,
                    committed_leader_epoch: int = ...,
                    metadata: str | None = ...,
                    error_code: int = ...,
                    unknown_tags: dict[int, bytes] | None = ...,
                ) -> None: ...

            name: str  # v8-9
            topic_id: UUID  # v10+
            partitions: list[OffsetFetchResponsePartitions]
            def __init__(
                self,
                *,
                name: str = ...,
                topic_id: UUID = ...,
                partitions: list[OffsetFetchResponsePartitions] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        group_id: str
        topics: list[OffsetFetchResponseTopics]
        error_code: int
        def __init__(
            self,
            *,
            group_id: str = ...,
            topics: list[OffsetFetchResponseTopics] = ...,
            error_code: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    throttle_time_ms: int  # v3+
    topics: list[OffsetFetchResponseTopic]  # v0-7
    error_code: int  # v2-7
    groups: list[OffsetFetchResponseGroup]  # v8+
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[OffsetFetchResponseTopic] = ...,
        error_code: int = ...,
        groups: list[OffsetFetchResponseGroup] = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[OffsetFetchRequest, OffsetFetchResponse]
