# Generated from the declarations by `python -m spark_kafkalog.protocol.stubs` (make stubs); do not edit.
from uuid import UUID

from ..schema import ApiSpec, Message

class DescribeTopicPartitionsRequest(Message):
    class TopicRequest(Message):
        name: str
        def __init__(self, *, name: str = ..., unknown_tags: dict[int, bytes] | None = ...) -> None: ...

    class Cursor(Message):
        topic_name: str
        partition_index: int
        def __init__(
            self, *, topic_name: str = ..., partition_index: int = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    topics: list[TopicRequest]
    response_partition_limit: int
    cursor: Cursor | None
    def __init__(
        self,
        *,
        topics: list[TopicRequest] = ...,
        response_partition_limit: int = ...,
        cursor: Cursor | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

class DescribeTopicPartitionsResponse(Message):
    class DescribeTopicPartitionsResponseTopic(Message):
        class DescribeTopicPartitionsResponsePartition(Message):
            error_code: int
            partition_index: int
            leader_id: int
            leader_epoch: int
            replica_nodes: list[int]
            isr_nodes: list[int]
            eligible_leader_replicas: list[int] | None
            last_known_elr: list[int] | None
            offline_replicas: list[int]
            def __init__(
                self,
                *,
                error_code: int = ...,
                partition_index: int = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
                replica_nodes: list[int] = ...,
                isr_nodes: list[int] = ...,
                eligible_leader_replicas: list[int] | None = ...,
                last_known_elr: list[int] | None = ...,
                offline_replicas: list[int] = ...,
                unknown_tags: dict[int, bytes] | None = ...,
            ) -> None: ...

        error_code: int
        name: str | None
        topic_id: UUID
        is_internal: bool
        partitions: list[DescribeTopicPartitionsResponsePartition]
        topic_authorized_operations: int
        def __init__(
            self,
            *,
            error_code: int = ...,
            name: str | None = ...,
            topic_id: UUID = ...,
            is_internal: bool = ...,
            partitions: list[DescribeTopicPartitionsResponsePartition] = ...,
            topic_authorized_operations: int = ...,
            unknown_tags: dict[int, bytes] | None = ...,
        ) -> None: ...

    class Cursor(Message):
        topic_name: str
        partition_index: int
        def __init__(
            self, *, topic_name: str = ..., partition_index: int = ..., unknown_tags: dict[int, bytes] | None = ...
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DescribeTopicPartitionsResponseTopic]
    next_cursor: Cursor | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DescribeTopicPartitionsResponseTopic] = ...,
        next_cursor: Cursor | None = ...,
        unknown_tags: dict[int, bytes] | None = ...,
    ) -> None: ...

API: ApiSpec[DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse]
